#!/usr/bin/env bash
# DIALOG toolkit: one entry point for a fresh Debian 12 machine.
#   ./run.sh package  build, then the Debian package dialog-toolkit (build/dialog-toolkit_*.deb)
#   ./run.sh demo   install what is missing (as root), build, start the local demo system
#   ./run.sh test   install what is missing (as root), build, run the whole test suite
#   ./run.sh build  install what is missing (as root) and build only
#   ./run.sh screenshots  build, run the tests that take screenshots, copy them over docs/*.png
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
BUILD=${DIALOG_BUILD_DIR:-$ROOT/build}

PACKAGES=(
    pkg-config ninja-build
    qt6-base-dev qt6-base-dev-tools libgl-dev libqt6opengl6-dev
    qt6-charts-dev qt6-websockets-dev qt6-httpserver-dev
    libprotobuf-dev protobuf-compiler libzstd-dev libpcre2-dev fonts-dejavu-core
    chromium openssh-client openssh-server
    python3-protobuf python3-zstandard python3-pytest
    libqt6sql6-sqlite libsqlite3-dev
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

package() {
    PACKAGES+=(dpkg-dev) # dpkg-shlibdeps works out the package's dependencies
    build
    say "building the Debian package dialog-toolkit in $BUILD"
    (cd "$BUILD" && cpack -G DEB)
}

run_tests() {
    build
    say "running the test suite"
    cd "$BUILD"
    QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 600 "$@"
}

# The tests save screenshots in the build tree only; refreshing the README's images is a choice.
screenshots() {
    build
    local shots=$BUILD/screenshots
    rm -rf "$shots"
    say "running the tests that take screenshots (into $shots)"
    (cd "$BUILD" && QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 600 -L gui "$@" &&
        QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 600 -R '^tst_isweb_page$')
    local n=0
    for f in "$shots"/*.png; do
        [ -e "$f" ] || continue
        cp "$f" "$ROOT/docs/"
        n=$((n + 1))
    done
    [ $n -gt 0 ] || { echo "run.sh: no screenshot was taken" >&2; exit 1; }
    say "copied $n screenshots over docs/*.png (git status shows which changed)"
}

DEMO_UP=0
GUI_PID=
stop_demo() {
    [ -n "$GUI_PID" ] && kill -TERM "$GUI_PID" 2>/dev/null || true
    [ $DEMO_UP = 0 ] && return 0
    say "stopping the demo partition"
    "$BUILD/bin/dialog" down "$ROOT/resources/partitions/demo.json" --run-dir "$BUILD/demo" || true
    DEMO_UP=0
}

demo() {
    build
    local bin=$BUILD/bin port=${DIALOG_DEMO_PORT:-3425} run=$BUILD/demo
    local partition=$ROOT/resources/partitions/demo.json
    export DIALOG_CONTROL_SERVER=127.0.0.1:$port
    trap stop_demo EXIT
    trap 'exit 0' INT TERM
    say "starting the demo partition $partition (Control Server $DIALOG_CONTROL_SERVER, logs in $run/logs)"
    DEMO_UP=1
    if ! "$bin/dialog" up "$partition" --port "$port" --run-dir "$run"; then
        echo "run.sh: the demo partition did not come up (see above and $run/logs)" >&2
        exit 1
    fi
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
        say "opening the run-control GUI (dialog-runcontrol): Configure, then Start run"
        "$bin/dialog-runcontrol" >"$run/logs/runcontrol-gui.log" 2>&1 &
        GUI_PID=$!
    else
        say "no display: drive the run from the command line (or run $bin/dialog-runcontrol where there is one)"
    fi
    cat <<EOT
  export DIALOG_CONTROL_SERVER=$DIALOG_CONTROL_SERVER
  $bin/dialog send RunCtrl.Master.Command configure      # then: start, pause, resume, stop, unconfigure, reset
  $bin/dialog get RunCtrl.Master.State --count 1         # the run's state, run number and every slave
  $bin/dialog get RunCtrl.RO1.Status                     # readout statistics, every second
  $bin/dialog is ls DAQ                                  # statistics in IS;  dialog is get RunParams.RunInfo
  $bin/dialog ls                                         # every process of the partition
EOT
    if [ -n "${DIALOG_DEMO_SECONDS:-}" ]; then
        sleep "$DIALOG_DEMO_SECONDS"
    else
        say "demo running; press Ctrl-C to stop it (dialog down)"
        while "$bin/dialog" ls --timeout-ms 3000 >/dev/null 2>&1; do sleep 2; done
        echo "run.sh: the Control Server is gone; stopping" >&2
    fi
}

case "${1:-}" in
    package) shift; package ;;
    demo) shift; demo "$@" ;;
    test) shift; run_tests "$@" ;;
    build) shift; build ;;
    screenshots) shift; screenshots "$@" ;;
    *) echo "usage: ./run.sh demo|test|build|screenshots|package" >&2; exit 1 ;;
esac
