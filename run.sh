#!/usr/bin/env bash
# DIALOG toolkit: one entry point for a fresh Debian 12 machine.
#   ./run.sh demo   install what is missing (as root), build, start the local demo system
#   ./run.sh test   install what is missing (as root), build, run the whole test suite
#   ./run.sh build  install what is missing (as root) and build only
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
BUILD=${DIALOG_BUILD_DIR:-$ROOT/build}

PACKAGES=(
    pkg-config ninja-build
    qt6-base-dev qt6-base-dev-tools libgl-dev libqt6opengl6-dev
    qt6-charts-dev qt6-websockets-dev qt6-httpserver-dev
    libprotobuf-dev protobuf-compiler libzstd-dev fonts-dejavu-core
)

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

install_deps() {
    local missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "run.sh: missing Debian packages: ${missing[*]}" >&2
        echo "run.sh: run as root, or: sudo apt-get install ${missing[*]}" >&2
        exit 1
    fi
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() {
    install_deps
    say "configuring and building in $BUILD"
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$BUILD" -j2
}

run_tests() {
    build
    say "running the test suite"
    cd "$BUILD"
    QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 600 "$@"
}

DEMO_PIDS=()
stop_demo() {
    [ ${#DEMO_PIDS[@]} -eq 0 ] && return 0
    say "stopping the demo"
    kill -TERM "${DEMO_PIDS[@]}" 2>/dev/null || true
    for _ in $(seq 30); do
        kill -0 "${DEMO_PIDS[@]}" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "${DEMO_PIDS[@]}" 2>/dev/null || true
    DEMO_PIDS=()
}

demo() {
    build
    local bin=$BUILD/bin port=${DIALOG_DEMO_PORT:-3425} logs=$BUILD/demo
    export DIALOG_CONTROL_SERVER=127.0.0.1:$port
    trap stop_demo EXIT
    trap 'exit 0' INT TERM
    mkdir -p "$logs"
    say "starting the Control Server on $DIALOG_CONTROL_SERVER (logs in $logs)"
    "$bin/dialog-controlserver" --port "$port" >"$logs/controlserver.log" 2>&1 &
    DEMO_PIDS+=($!)
    local up=0
    for _ in $(seq 50); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then up=1; break; fi
        sleep 0.1
    done
    if [ $up = 0 ]; then
        echo "run.sh: the Control Server did not start:" >&2
        cat "$logs/controlserver.log" >&2
        exit 1
    fi
    for i in 1 2 3; do
        "$bin/dialog" publish "Readout$i.EventRate" --name "Readout$i" --rate 2 >"$logs/readout$i.log" 2>&1 &
        DEMO_PIDS+=($!)
    done
    "$bin/dialog" echo --name Master --command Run.Start --command Run.Stop >"$logs/master.log" 2>&1 &
    DEMO_PIDS+=($!)
    "$bin/dialog" get Readout1.EventRate --name Monitor >"$logs/monitor.log" 2>&1 &
    DEMO_PIDS+=($!)
    sleep 1
    say "dialog ls"
    "$bin/dialog" ls
    "$bin/dialog" send Run.Start "run 1"
    sleep 0.3
    say "the Master received: $(cat "$logs/master.log")"
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
        say "opening the DIALOG inspector"
        "$bin/dialog-inspector" >"$logs/inspector.log" 2>&1 &
        DEMO_PIDS+=($!)
    else
        say "no display: run $bin/dialog-inspector where there is one to see the processes"
    fi
    say "try: DIALOG_CONTROL_SERVER=$DIALOG_CONTROL_SERVER $bin/dialog get Readout2.EventRate"
    if [ -n "${DIALOG_DEMO_SECONDS:-}" ]; then
        sleep "$DIALOG_DEMO_SECONDS"
    else
        say "demo running; press Ctrl-C to stop"
        while kill -0 "${DEMO_PIDS[0]}" 2>/dev/null; do sleep 1; done
    fi
}

case "${1:-}" in
    demo) shift; demo "$@" ;;
    test) shift; run_tests "$@" ;;
    build) shift; build ;;
    *) echo "usage: ./run.sh demo|test|build" >&2; exit 1 ;;
esac
