#!/usr/bin/env bash
# DIALOG toolkit: one entry point for a fresh Debian 12 machine.
#   ./run.sh package  build, then the Debian packages, one per role of a host (build/*.deb)
#   ./run.sh demo   install what is missing (as root), build, start the local demo system
#   ./run.sh test   install what is missing (as root), build, run the whole test suite, then a short
#                   run of every fuzz target (build-fuzz, clang)
#   ./run.sh test --sanitize address|thread   the whole suite built with ASan+UBSan or TSan
#                   (build-asan, build-tsan)
#   ./run.sh soak [--minutes N]   the soak: faults injected into the running demo partition
#   ./run.sh build  install what is missing (as root) and build only
#   ./run.sh screenshots  build, run the tests that take screenshots, copy them over docs/*.png
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
BUILD=${DIALOG_BUILD_DIR:-$ROOT/build}

# Everything beyond bash, apt and git of a bare Debian 12 (debootstrap --variant=minbase): the
# compiler and build tools first, then the libraries, then what the tests drive.
PACKAGES=(
    g++ make cmake ninja-build pkg-config git ca-certificates
    qt6-base-dev qt6-base-dev-tools libgl-dev libqt6opengl6-dev
    qt6-charts-dev qt6-websockets-dev qt6-httpserver-dev
    libprotobuf-dev protobuf-compiler libzstd-dev libpcre2-dev fonts-dejavu-core
    chromium openssh-client openssh-server
    python3-protobuf python3-zstandard python3-pytest
    libqt6sql6-sqlite libsqlite3-dev libqt6sql6-psql postgresql
    clang-14 libclang-rt-14-dev
    prometheus openssl
    iproute2 ethtool python3 # the multihost tests: namespaces, a slow cable (tests/multihost/wire.py)
    gdb # dialog-agent: backtraces of crashed processes from their cores (tst_agent)
    help2man man-db doxygen # manual pages (built with the programs, checked by man), the API reference
    dpkg-dev file # the Debian packages: dpkg-shlibdeps works out their dependencies, CPack looks at
                  # each binary with file(1) first (tst_debs builds them)
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
    build
    say "building the Debian packages in $BUILD"
    (cd "$BUILD" && cpack -G DEB)
    ls "$BUILD"/*.deb
}

run_tests() {
    local args=() sanitize=
    while [ $# -gt 0 ]; do
        case "$1" in
            --sanitize) sanitize=${2:-}; shift 2 || { echo "run.sh: --sanitize needs address or thread" >&2; exit 1; } ;;
            --sanitize=*) sanitize=${1#--sanitize=}; shift ;;
            *) args+=("$1"); shift ;;
        esac
    done
    if [ -n "$sanitize" ]; then
        sanitized_tests "$sanitize" "${args[@]}"
        return
    fi
    build
    say "running the test suite"
    local rc=0
    if [ ${#args[@]} -eq 0 ]; then
        # The whole suite: the unit and integration tests two at a time (each starts its daemons on
        # free loopback ports and keeps its files in a directory of its own), then one at a time the
        # tests that take the whole machine or shared system state (GUIs, network namespaces,
        # packages, the soak, Python against the demo).
        (cd "$BUILD" && QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 600 -j2 -L '^(unit|integration|docs)$' &&
            cp Testing/Temporary/LastTest.log Testing/Temporary/LastTest-parallel.log &&
            QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 600 -LE '^(unit|integration|docs)$') || rc=$?
    else
        (cd "$BUILD" && QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 600 "${args[@]}") || rc=$?
    fi
    # Tests skipped as a whole (e.g. multihost without network namespaces) say why, one line each.
    grep -h '^SKIP   : ' "$BUILD"/Testing/Temporary/LastTest*.log 2>/dev/null | sort -u | sed 's/^/skipped: /' || true
    [ $rc -eq 0 ] || return $rc
    # The fuzz targets belong to the whole suite, not to a run of selected tests.
    if [ ${#args[@]} -eq 0 ]; then
        fuzz_tests
    fi
}

# A short run of every libFuzzer target (tests/fuzz) from its seeds, two at a time, when clang is
# there; the targets and the library are built in a separate tree with ASan+UBSan.
fuzz_tests() {
    if ! command -v clang++-14 >/dev/null || ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
        say "clang-14 with libFuzzer not installed: fuzz targets skipped"
        return 0
    fi
    local fbuild=$ROOT/build-fuzz
    say "building the fuzz targets in $fbuild"
    cmake -S "$ROOT" -B "$fbuild" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
        -DCMAKE_C_COMPILER=clang-14 -DDIALOG_FUZZ=ON -DDIALOG_BUILD_TESTS=OFF -DDIALOG_BUILD_GUIS=OFF >/dev/null
    cmake --build "$fbuild" -j2 --target fuzz
    say "running every fuzz target for a few seconds"
    (cd "$fbuild" && ctest --output-on-failure -L fuzz -j2)
}

# The whole suite built with a sanitizer in its own tree. Every suppression is in
# tests/sanitizers/ with the reason next to it.
sanitized_tests() {
    local kind=$1; shift
    case "$kind" in
        address) BUILD=$ROOT/build-asan ;;
        thread) BUILD=$ROOT/build-tsan
            PACKAGES+=(qt6-base-private-dev) ;; # Qt's tool hooks (libdialog/src/tsan_qt.cpp)
        *) echo "run.sh: --sanitize takes address or thread, not '$kind'" >&2; exit 1 ;;
    esac
    install_deps
    say "configuring and building with -fsanitize=$kind in $BUILD"
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDIALOG_SANITIZE="$kind" >/dev/null
    cmake --build "$BUILD" -j2
    local supp=$ROOT/tests/sanitizers
    # quarantine_size_mb: freed blocks kept poisoned to catch a use after free; 64 MiB (not the
    # default 256) so that the tests' bounds on a process's memory growth still mean something
    # (tests/shared/isfixture.h rssGrowthBoundKb()).
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0:quarantine_size_mb=64
    export LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp
    # die_after_fork=0: QProcess forks the test helpers and daemons from a threaded process; the
    # child only calls exec, which TSan cannot tell from a child that goes on running threads.
    export TSAN_OPTIONS=suppressions=$supp/tsan.supp:halt_on_error=0:second_deadlock_stack=1:die_after_fork=0
    # Not the package test: it builds a consumer outside the tree with the plain compiler flags, and
    # an instrumented libdialog needs the sanitizer's run-time in that consumer too.
    say "running the test suite under -fsanitize=$kind"
    cd "$BUILD"
    QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 1200 -LE package "$@"
}

soak() {
    build
    say "soak: faults injected into the demo partition (tests/soak/soak.py)"
    python3 "$ROOT/tests/soak/soak.py" --bin "$BUILD/bin" "$@"
}

# The tests save screenshots in the build tree only; refreshing the README's images is a choice.
screenshots() {
    build
    local shots=$BUILD/screenshots
    rm -rf "$shots"
    say "running the tests that take screenshots (into $shots)"
    (cd "$BUILD" && QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 600 -L gui "$@" &&
        QT_QPA_PLATFORM=offscreen ctest --output-on-failure --timeout 600 -R '^(tst_isweb_page|tst_loggerweb)$')
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
    "$BUILD/bin/dialogctl" down "$ROOT/resources/partitions/demo.json" --run-dir "$BUILD/demo" || true
    DEMO_UP=0
}

demo() {
    build
    local bin=$BUILD/bin port=${DIALOG_DEMO_PORT:-3425} run=$BUILD/demo
    local partition=$ROOT/resources/partitions/demo.json
    export DIALOG_CONTROL_SERVER=127.0.0.1:$port
    # The partition's shared secret (dialogctl up makes it): every dialogctl and GUI of this shell uses it.
    export DIALOG_SECRET_FILE=${DIALOG_SECRET_FILE:-$run/secret}
    trap stop_demo EXIT
    trap 'exit 0' INT TERM
    say "starting the demo partition $partition (Control Server $DIALOG_CONTROL_SERVER, logs in $run/logs)"
    DEMO_UP=1
    if ! "$bin/dialogctl" up "$partition" --port "$port" --run-dir "$run"; then
        echo "run.sh: the demo partition did not come up (see above and $run/logs)" >&2
        exit 1
    fi
    # The configuration the master configures from: resources/ in the partition's database (a
    # version only when something changed since the last demo).
    say "importing resources/ into the configuration database (dialogctl config import)"
    "$bin/dialogctl" config import "$ROOT/resources" --message "./run.sh demo"
    if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
        say "opening the run-control GUI (dialog-runcontrol): Configure, then Start run"
        "$bin/dialog-runcontrol" --configdb configdb >"$run/logs/runcontrol-gui.log" 2>&1 &
        GUI_PID=$!
    else
        say "no display: drive the run from the command line (or run $bin/dialog-runcontrol where there is one)"
    fi
    cat <<EOT
  export DIALOG_CONTROL_SERVER=$DIALOG_CONTROL_SERVER
  export DIALOG_SECRET_FILE=$DIALOG_SECRET_FILE     # the demo's secret: dialogctl and the GUIs need it
  $bin/dialogctl rc configure                               # then: start, pause, resume, stop, unconfigure, reset
  $bin/dialogctl rc state                                   # the run's state, run number and its slaves
  $bin/dialogctl get RunCtrl.RO1.Status                     # readout statistics, every second
  $bin/dialogctl is ls DAQ                                  # statistics in IS;  dialogctl is get RunParams.RunInfo
  $bin/dialogctl ls                                         # every process of the partition
  $bin/dialogctl dqm ls                                     # data-quality checks of the sampled events
  $bin/dialogctl alarm ls                                   # the alarm server's table (GUI: dialog-alarms)
  $bin/dialog-presenter --pages $ROOT/resources/presenter/demo.json   # histograms and their checks
  web IS: http://127.0.0.1:8425/ (RunParams)  :8426/ (DAQ)  :8427/ (Monitor)  :8428/ (DQM)
  http://127.0.0.1:8427/is/Monitor/Monitor.RO2.occupancy.png?check=DQM.RO2.dead   # a histogram and its check
EOT
    if [ -n "${DIALOG_DEMO_SECONDS:-}" ]; then
        sleep "$DIALOG_DEMO_SECONDS"
    else
        say "demo running; press Ctrl-C to stop it (dialogctl down)"
        while "$bin/dialogctl" ls --timeout-ms 3000 >/dev/null 2>&1; do sleep 2; done
        echo "run.sh: the Control Server is gone; stopping" >&2
    fi
}

case "${1:-}" in
    package) shift; package ;;
    demo) shift; demo "$@" ;;
    test) shift; run_tests "$@" ;;
    soak) shift; soak "$@" ;;
    build) shift; build ;;
    screenshots) shift; screenshots "$@" ;;
    *) echo "usage: ./run.sh demo|test [--sanitize address|thread]|soak [--minutes N]|build|screenshots|package" >&2; exit 1 ;;
esac
