#!/usr/bin/env bash
# build.sh - the one entry point of zoffload.  `./build.sh help` for modes.
#
# Also works unchanged as an OSS-Fuzz / ClusterFuzzLite build script: with
# $LIB_FUZZING_ENGINE and $OUT set and no mode given, it builds the fuzz
# targets with $CC $CFLAGS and copies them, their .dict/.options and seed
# corpora to $OUT.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

JOBS="$(nproc 2>/dev/null || echo 2)"

# Sanitizer runtime options for everything this script runs (a caller's
# own settings win).
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:print_stacktrace=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-print_suppressions=0}"

say() { printf '[build.sh] %s\n' "$*" >&2; }
die() { printf '[build.sh] error: %s\n' "$*" >&2; exit 1; }

usage() {
    cat <<'EOF'
usage: ./build.sh [MODE] [ARGS...]

  (no mode)   install missing build dependencies, configure build/
              (RelWithDebInfo, clang if present, $CC/$CFLAGS honoured) and
              build the library, unit tests, tools and engine-less replay
              drivers (no sanitizers; fuzz engine binaries: `fuzz`)
  test        install missing dependencies, build build-test/ with clang,
              ASan+UBSan and libFuzzer, run the whole ctest suite
  fuzz        build build-fuzz/: clang, ASan+UBSan, libFuzzer targets
  run [ARGS]  the main job: build build-fuzz/ if needed (incremental), then
              run `zofuzz run ARGS` - fuzz the runtime on the shipped corpus
              (`./build.sh run --help` for zofuzz's options)
  oss-fuzz    OSS-Fuzz / ClusterFuzzLite build (also the default when
              $LIB_FUZZING_ENGINE and $OUT are set): $CC $CFLAGS, engine
              $LIB_FUZZING_ENGINE, targets + .dict/.options/_seed_corpus.zip
              copied to $OUT, no CUDA, no apt
  bench [ARGS] the benchmarks: exec bench/run.sh ARGS (--quick: under 2
              minutes; `./build.sh bench --help`)
  deps        only install missing dependencies (apt-get)
  help        this text

  oracle      create (once) and cache .venv-oracle/: DeepSpeed from PyPI
              over Debian's torch, for tools/deepspeed_oracle.py (`test`
              does this too, and skips the DeepSpeed test if it fails)
  gpu         the prepared GPU check, tests/gpu/run.sh (needs CUDA, NCCL
              and a GPU; see docs/gpu.md)

  not yet:    coverage (exits with an error)

Environment: CC, CFLAGS (default mode and oss-fuzz), ASAN_OPTIONS,
UBSAN_OPTIONS (defaults: halt_on_error=1, detect_leaks=1,
print_stacktrace=1), ZO_NO_APT=1 skips the dependency step.
EOF
}

# ---------------------------------------------------------------------------
# Dependencies
# ---------------------------------------------------------------------------

clang_major() {
    clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9][0-9]*\).*/\1/p' | head -n1
}

have_libfuzzer() {
    command -v clang >/dev/null 2>&1 || return 1
    local rd arch
    rd="$(clang -print-resource-dir 2>/dev/null)" || return 1
    arch="$(uname -m)"
    [[ -f "$rd/lib/linux/libclang_rt.fuzzer-$arch.a" ||
       -f "$rd/lib/$arch-unknown-linux-gnu/libclang_rt.fuzzer.a" ]]
}

have_cmocka() {
    if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists cmocka; then
        return 0
    fi
    [[ -f /usr/include/cmocka.h ]]
}

have_torch() {
    [[ -x /usr/bin/python3 ]] || return 1
    /usr/bin/python3 -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)' \
        >/dev/null 2>&1
}

apt_has() { apt-cache show "$1" >/dev/null 2>&1; }

# The package that ships libFuzzer for the installed (or about to be
# installed) clang: Debian 12 splits it into libclang-rt-N-dev, older
# releases keep it in libclang-common-N-dev.
libfuzzer_package() {
    local major
    major="$(clang_major)"
    if [[ -n "$major" ]]; then
        if apt_has "libclang-rt-$major-dev"; then echo "libclang-rt-$major-dev"; return; fi
        if apt_has "libclang-common-$major-dev"; then echo "libclang-common-$major-dev"; return; fi
    fi
    if apt_has libclang-rt-dev; then echo libclang-rt-dev; else echo libclang-common-dev; fi
}

ensure_deps() {
    if [[ "${ZO_NO_APT:-0}" == 1 ]]; then
        say "ZO_NO_APT=1: not checking dependencies"
        return 0
    fi
    local missing=() need_fuzzer=0
    command -v cmake >/dev/null 2>&1 || missing+=(cmake)
    command -v clang >/dev/null 2>&1 || missing+=(clang)
    have_libfuzzer || need_fuzzer=1
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    have_cmocka || missing+=(libcmocka-dev)
    have_torch || missing+=(python3-torch)
    command -v zip >/dev/null 2>&1 || missing+=(zip)
    # Open MPI: the NCCL backend's MPI bootstrap check (nccl/mpi_check)
    command -v mpicc >/dev/null 2>&1 || missing+=(libopenmpi-dev)
    command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
    # the DeepSpeed oracle's venv (tools/oracle_venv.sh)
    /usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
    if ((${#missing[@]} == 0 && need_fuzzer == 0)); then
        return 0
    fi
    local what="${missing[*]:-}"
    ((need_fuzzer)) && what="$what libFuzzer"
    command -v apt-get >/dev/null 2>&1 ||
        die "missing build dependencies ($what) and no apt-get to install them"
    local sudo=()
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null 2>&1 || die "missing build dependencies ($what), not root and no sudo"
        sudo=(sudo)
    fi
    # env: sudo does not pass DEBIAN_FRONTEND through by default.
    local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get)
    say "installing missing dependencies: ${what# }"
    "${apt[@]}" update -qq
    if ((${#missing[@]})); then
        "${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}"
    fi
    # libFuzzer last: its package name depends on the clang just installed.
    if ! have_libfuzzer; then
        local pkg
        pkg="$(libfuzzer_package)"
        "${apt[@]}" install -y -qq --no-install-recommends "$pkg"
        have_libfuzzer || die "installed $pkg but clang's libFuzzer (libclang_rt.fuzzer) is still missing"
    fi
    have_cmocka || die "libcmocka-dev installed but cmocka.h/pkg-config cmocka not found"
}

# ---------------------------------------------------------------------------
# Builds
# ---------------------------------------------------------------------------

# configure DIR [cmake args...] ; the first configure of DIR fixes the
# compiler (CC) - later runs only refresh the cache.
configure() {
    local dir="$1"; shift
    cmake -S "$ROOT" -B "$dir" "$@" >&2
}

build_dir() {
    cmake --build "$1" -j"$JOBS" >&2
}

# Sanitizer + libFuzzer build used by `test`, `fuzz` and `run`.  -O1 -g and
# no NDEBUG: the checks stay in, the fuzzers stay fast.
configure_sanitized() {
    local dir="$1"; shift
    command -v clang >/dev/null 2>&1 || die "clang not found (run ./build.sh deps)"
    CC=clang configure "$dir" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g" \
        -DZO_SANITIZE=ON \
        -DZO_FUZZ_ENGINE=-fsanitize=fuzzer \
        "$@"
}

mode_default() {
    ensure_deps
    local cc="${CC:-}"
    if [[ -z "$cc" ]] && command -v clang >/dev/null 2>&1; then cc=clang; fi
    # A plain library build: no sanitizers, no coverage instrumentation
    # (libzoffload.so must load into any program), so no engine binaries
    # either - those come from `./build.sh fuzz` (engine-less replay drivers
    # and tools are built here).
    CC="${cc:-cc}" configure build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZO_FUZZ_ENGINE= -DZO_SANITIZE=OFF
    build_dir build
    say "built: build/libzoffload.a build/libzoffload.so$( [[ -d build/fuzz ]] && echo ', build/fuzz/ (tools, replay drivers)')"
}

# The DeepSpeed oracle's venv (deepspeed from PyPI over Debian's torch),
# cached in .venv-oracle/.  Not fatal: without the registry the DeepSpeed
# differential test is skipped (ctest reports it), everything else runs.
ensure_oracle() {
    [[ -x tools/oracle_venv.sh ]] || return 0
    if ! tools/oracle_venv.sh >/dev/null; then
        say "DeepSpeed oracle venv unavailable: tools/difftest_deepspeed will be skipped"
    fi
}

mode_test() {
    ensure_deps
    ensure_oracle
    configure_sanitized build-test -DBUILD_TESTING=ON
    build_dir build-test
    # ctest prints its own closing summary ("100% tests passed, 0 tests
    # failed out of N"); its exit status is ours.
    cd build-test
    ctest --output-on-failure --no-tests=error --timeout 900 -j"$JOBS"
}

mode_fuzz() {
    ensure_deps
    configure_sanitized build-fuzz -DBUILD_TESTING=OFF
    build_dir build-fuzz
    say "fuzz targets in build-fuzz/fuzz/"
}

mode_run() {
    if [[ ! -f build-fuzz/CMakeCache.txt ]]; then
        ensure_deps
        configure_sanitized build-fuzz -DBUILD_TESTING=OFF
    fi
    build_dir build-fuzz
    local zofuzz="build-fuzz/fuzz/zofuzz"
    if [[ ! -x "$zofuzz" ]]; then
        die "$zofuzz was not built: the corpus tool (fuzz/zofuzz.c, issue 4) is not in this tree yet"
    fi
    exec "$zofuzz" run "$@"
}

zip_dir() { # zip_dir SRC_DIR ZIPFILE : the files of SRC_DIR, flat
    local src="$1" dst="$2"
    rm -f "$dst"
    if command -v zip >/dev/null 2>&1; then
        (cd "$src" && zip -q -r "$dst" .)
    else
        python3 - "$src" "$dst" <<'PY'
import os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
    for base, _, files in os.walk(src):
        for f in sorted(files):
            p = os.path.join(base, f)
            z.write(p, os.path.relpath(p, src))
PY
    fi
}

mode_oss_fuzz() {
    [[ -n "${LIB_FUZZING_ENGINE:-}" ]] || die "oss-fuzz mode needs \$LIB_FUZZING_ENGINE"
    [[ -n "${OUT:-}" ]] || die "oss-fuzz mode needs \$OUT"
    mkdir -p "$OUT"
    local dir="${WORK:-$ROOT}/build-oss-fuzz"
    # No apt, no sanitizer or instrumentation flags of our own: OSS-Fuzz
    # passes them in $CFLAGS.  No cmocka there, so no unit tests; no CUDA.
    configure "$dir" \
        -DCMAKE_BUILD_TYPE= \
        -DBUILD_TESTING=OFF \
        -DZO_SANITIZE=OFF \
        -DZO_FUZZ_INSTRUMENT=OFF \
        -DZO_NCCL=OFF \
        "-DZO_FUZZ_ENGINE=$LIB_FUZZING_ENGINE"
    build_dir "$dir"
    # Fuzz targets: the engine binaries fuzz_<name> in the build's fuzz/
    # directory; not the engine-less replay drivers (fuzz_<name>_replay) nor
    # test executables (fuzz_test_*), which OSS-Fuzz would take for targets.
    local targets=() t
    if [[ -d "$dir/fuzz" ]]; then
        while IFS= read -r t; do targets+=("$t"); done < <(
            find "$dir/fuzz" -maxdepth 1 -type f -perm -u+x -name 'fuzz_*' \
                ! -name '*_replay' ! -name 'fuzz_test_*' -printf '%f\n' | sort)
    fi
    ((${#targets[@]})) || die "no fuzz_* targets were built in $dir/fuzz"
    for t in "${targets[@]}"; do
        cp -f "$dir/fuzz/$t" "$OUT/$t"
        [[ -f "fuzz/$t.dict" ]] && cp -f "fuzz/$t.dict" "$OUT/$t.dict"
        [[ -f "fuzz/$t.options" ]] && cp -f "fuzz/$t.options" "$OUT/$t.options"
        if [[ -d "corpus/seeds/$t" ]]; then
            zip_dir "$ROOT/corpus/seeds/$t" "$OUT/${t}_seed_corpus.zip"
        fi
        say "OSS-Fuzz target: $OUT/$t"
    done
}

not_yet() {
    die "mode '$1' is not implemented yet ($2)"
}

# ---------------------------------------------------------------------------

mode="${1:-}"
if [[ -z "$mode" && -n "${LIB_FUZZING_ENGINE:-}" && -n "${OUT:-}" ]]; then
    mode=oss-fuzz
fi
[[ $# -gt 0 ]] && shift

case "$mode" in
    "")          mode_default ;;
    test)        mode_test ;;
    fuzz)        mode_fuzz ;;
    run)         mode_run "$@" ;;
    oss-fuzz)    mode_oss_fuzz ;;
    deps)        ensure_deps ;;
    help|-h|--help) usage ;;
    bench)
        [[ -x bench/run.sh ]] || not_yet bench "issue 7: benchmarks (bench/run.sh)"
        exec bench/run.sh "$@" ;;
    coverage)    not_yet coverage "issue 6: clang source coverage report" ;;
    oracle)      ensure_deps; exec tools/oracle_venv.sh "$@" ;;
    gpu)         exec tests/gpu/run.sh "$@" ;;
    *)           usage >&2; die "unknown mode '$mode'" ;;
esac
