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
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:print_stacktrace=1:abort_on_error=0:allocator_may_return_null=1}"
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
              ASan+UBSan and libFuzzer, run the ctest suite less the tests
              labelled `long` (with Open MPI: the 4-process tests mpi/*
              under mpiexec as well): every oracle and property test in
              its fast set (a few minutes on 2 cores)
  test-long   the same build, then only the ctest label `long`: the full
              sets of the oracle runs (difftests against torch and
              DeepSpeed at seeds 1..250, every captured model, every
              exported DeepSpeed script) and of the codec's random round
              trips (.ci/run runs it as its own step)
  fuzz        build build-fuzz/: clang, ASan+UBSan, libFuzzer targets
  run [ARGS]  the main job: build build-fuzz/ if needed (incremental), then
              run `zofuzz run ARGS` - fuzz the runtime on the shipped corpus
              (`./build.sh run --help` for zofuzz's options)
  oss-fuzz    OSS-Fuzz / ClusterFuzzLite build (also the default when
              $LIB_FUZZING_ENGINE and $OUT are set): $CC $CFLAGS, engine
              $LIB_FUZZING_ENGINE, targets + .dict/.options/_seed_corpus.zip
              copied to $OUT, no CUDA, no apt
  bench [ARGS] the benchmarks: exec bench/run.sh ARGS (--quick: under 2
              minutes after the builds; `./build.sh bench --help`)
  deps        only install missing dependencies (apt-get)
  help        this text

  oracle [--current|--legacy]
              create (once) and cache an oracle venv: --current (default
              of `test` too) PyPI's torch 2.15 + deepspeed 0.19.8 linked as
              .venv-current/; --legacy deepspeed 0.15.4 over Debian's torch
              1.13 in .venv-oracle/ (`test` makes both; a differential test
              whose venv is missing is skipped, or fails under CI=true when
              PyPI answers)
  gpu         the prepared GPU check, tests/gpu/run.sh (needs CUDA, NCCL
              and a GPU; see docs/gpu.md)

  CI and reliability (.ci/run runs them all, docs/ci-fuzzing.md):
  replay      every fuzz target's corpus (corpus/seeds/<t>, corpus/regressions,
              the .scn texts, fuzz_api's smoke corpus if any) through its
              engine-less regression driver (<t>_replay), ASan+UBSan
  smoke [S]   libFuzzer smoke run of each engine target (fuzz_hooks,
              fuzz_api, fuzz_scn_parse), S seconds each (default 60), default
              policy; fails on any crash and prints it (fuzz_hooks: as a
              minimised .scn scenario, zofuzz minimize)
  msan        build-msan/: the harness (runtime, simulator, checker, replay
              drivers, zofuzz; no cmocka tests) with clang -fsanitize=memory,
              replaying every corpus and verifying every .scn
  valgrind    build-valgrind/: no sanitizers; the unit tests, the
              reliability tests and the corpus replays under valgrind
              memcheck (definite/indirect leaks and every error fail)
  reliability build-reliability/ (ASan+UBSan): allocation-failure injection
              over the model scenarios and host-backend fault injection
              (tests/reliability)
  coverage    build-coverage/: clang source coverage of the unit,
              corpus and reliability tests and the corpus replays;
              HTML report build-coverage/html/index.html, summary line for
              runtime/ (lines, branches), uncovered lines in
              build-coverage/uncovered-runtime.txt

Environment: CC, CFLAGS (default mode and oss-fuzz), ASAN_OPTIONS,
UBSAN_OPTIONS (defaults: halt_on_error=1, detect_leaks=1,
print_stacktrace=1, allocator_may_return_null=1 so an allocation the
system refuses is ZO_ERR_NOMEM as in a plain build), ZO_NO_APT=1 skips
the dependency step.
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
    # Open MPI: the MPI backend and its multi-process tests (tests/mpi:
    # ctest mpi/replay, mpi/divergence under mpiexec -np 4) and the NCCL
    # backend's MPI bootstrap check (nccl/mpi_check)
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

# The oracles' venvs (tools/oracle_venv.sh): the current stack (PyPI's
# torch 2.15 + deepspeed 0.19.8, cached under ~/.cache/zoffload and linked
# as .venv-current) and the legacy one (deepspeed 0.15.4 over Debian's torch
# 1.13, .venv-oracle).  Not fatal here: without the registry the
# differential tests that need a venv report SKIP (under CI=true they fail
# instead when the registry answers, so a broken install cannot hide).
ensure_oracle() {
    [[ -x tools/oracle_venv.sh ]] || return 0
    local t0=$SECONDS rc=0
    tools/oracle_venv.sh --current >/dev/null || rc=$?
    if ((rc)); then
        say "current-stack oracle venv unavailable (exit $rc): its differential tests will report it"
    else
        say "current-stack oracle venv ready ($((SECONDS - t0)) s)"
    fi
    t0=$SECONDS
    rc=0
    tools/oracle_venv.sh --legacy >/dev/null || rc=$?
    if ((rc)); then
        say "legacy oracle venv unavailable (exit $rc): tools/difftest_deepspeed_0.15 will be skipped"
    else
        say "legacy oracle venv ready ($((SECONDS - t0)) s)"
    fi
}

# The test build: ASan+UBSan, libFuzzer, the 0xA5 poison fill of gathered
# buffers on (ZO_POISON: a read before the gather completed is visibly
# wrong; the default of a sanitizer build, stated here so that no cache
# entry can turn it off).
build_test() {
    ensure_deps
    ensure_oracle
    configure_sanitized build-test -DBUILD_TESTING=ON -DZO_POISON=ON
    build_dir build-test
}

# ctest prints its own closing summary ("100% tests passed, 0 tests failed
# out of N"); its exit status is ours.  The label `long` marks the full sets
# of the long oracle and property runs (each has a fast set of its own in
# the default run): `test` leaves them out, `test-long` runs only them.
mode_test() {
    build_test
    cd build-test
    ctest --output-on-failure --no-tests=error --timeout 900 -j"$JOBS" -LE long
}

mode_test_long() {
    build_test
    cd build-test
    ctest --output-on-failure --no-tests=error --timeout 2400 -j"$JOBS" -L long
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
        die "$zofuzz was not built: the corpus tool (fuzz/zofuzz.c) is missing from this tree"
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
        -DZO_MPI=OFF \
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

# ---------------------------------------------------------------------------
# CI and reliability modes
# ---------------------------------------------------------------------------

FUZZ_TARGETS=(fuzz_hooks fuzz_api fuzz_scn_parse)

# corpus_dirs T : the committed corpus directories of target T (one a line)
corpus_dirs() {
    local t="$1" d
    for d in "corpus/seeds/$t" "corpus/regressions/$t"; do
        [[ -d "$d" ]] && echo "$ROOT/$d"
    done
    if [[ "$t" == fuzz_scn_parse ]]; then
        # the parser also replays every scenario text and the open findings
        for d in corpus/models corpus/regressions tests/corpus/open-findings; do
            [[ -d "$d" ]] && echo "$ROOT/$d"
        done
    fi
    # inputs the smoke runs kept (fuzz_api has no committed corpus)
    for d in build-ci-smoke/"$t"-*/corpus; do
        [[ -d "$d" ]] && echo "$ROOT/$d"
    done
    return 0
}

# replay_all BUILD_DIR [wrapper...] : every target's corpora through its
# engine-less replay driver; fails on the first failing replay
replay_all() {
    local dir="$1"; shift
    local t dirs n
    for t in "${FUZZ_TARGETS[@]}"; do
        local bin="$dir/fuzz/${t}_replay"
        [[ -x "$bin" ]] || die "$bin was not built"
        mapfile -t dirs < <(corpus_dirs "$t")
        if [[ "$t" == fuzz_api ]]; then
            # no committed corpus: 200 fixed pseudo-random programs as well
            mkdir -p "$dir/generated-$t"
            python3 -c 'import random,sys
r = random.Random(6)
for i in range(200):
    open("%s/gen-%03d" % (sys.argv[1], i), "wb").write(bytes(r.randrange(256) for _ in range(r.randrange(1, 2048))))' "$dir/generated-$t"
            dirs+=("$dir/generated-$t")
        fi
        if ((${#dirs[@]} == 0)); then
            say "replay $t: no corpus"
            continue
        fi
        n=$(find "${dirs[@]}" -maxdepth 1 -type f | wc -l)
        say "replay $t: $n inputs from ${dirs[*]#$ROOT/}"
        "$@" "$bin" "${dirs[@]}" >"$dir/replay-$t.log" 2>&1 || {
            tail -n 40 "$dir/replay-$t.log" >&2
            die "replay of $t failed (log: $dir/replay-$t.log)"
        }
        tail -n 2 "$dir/replay-$t.log" >&2
    done
}

mode_replay() {
    ensure_deps
    if [[ ! -f build-fuzz/CMakeCache.txt ]]; then
        configure_sanitized build-fuzz -DBUILD_TESTING=OFF
    fi
    cmake --build build-fuzz -j"$JOBS" --target fuzz_hooks_replay fuzz_api_replay fuzz_scn_parse_replay >&2
    replay_all build-fuzz
    say "replay: every corpus replayed clean (ASan+UBSan)"
}

# Prints one crash input of target t readably: fuzz_hooks crashes are
# minimised by zofuzz run itself (printed as .scn); fuzz_api prints its
# call sequence; fuzz_scn_parse its text.
show_crash() {
    local t="$1" f="$2"
    case "$t" in
        fuzz_hooks)
            if [[ -f "$f.scn" ]]; then
                echo "---- $f (minimised scenario) ----"; cat "$f.scn"
            else
                echo "---- $f (zofuzz minimize) ----"
                build-fuzz/fuzz/zofuzz minimize "$f" 2>&1 | tail -n 80 || true
            fi ;;
        fuzz_api)
            echo "---- $f: call sequence (ZOFUZZ_TRACE=1 fuzz_api_replay) ----"
            ZOFUZZ_TRACE=1 build-fuzz/fuzz/fuzz_api_replay "$f" 2>&1 | tail -n 120 || true ;;
        *)
            echo "---- $f: input text ----"
            head -c 4000 "$f" | cat -v; echo
            build-fuzz/fuzz/"${t}_replay" "$f" 2>&1 | tail -n 40 || true ;;
    esac
}

mode_smoke() {
    local secs="${1:-60}" t rc failed=()
    [[ "$secs" =~ ^[0-9]+$ ]] || die "smoke: seconds must be a number, got '$secs'"
    mode_fuzz
    local work="$ROOT/build-ci-smoke"
    mkdir -p "$work"
    # ZO_SMOKE_POLICY (by hand only): a legacy policy, to see the crash path
    local policy="${ZO_SMOKE_POLICY:-per-call}"
    for t in "${FUZZ_TARGETS[@]}"; do
        [[ -x build-fuzz/fuzz/$t ]] || die "build-fuzz/fuzz/$t was not built"
        say "smoke: $t for ${secs}s (policy $policy)"
        rc=0
        touch "$work/.stamp-$t"
        build-fuzz/fuzz/zofuzz run --target "$t" --time "$secs" --work "$work" \
            --policy "$policy" --progress 20 --max-repro 3 || rc=$?
        if ((rc == 1)); then
            failed+=("$t")
            local c
            while IFS= read -r c; do show_crash "$t" "$c"; done < <(
                find "$work/$t-"*/crashes-* -maxdepth 1 -type f \
                    \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) \
                    ! -name '*.scn' -newer "$work/.stamp-$t" 2>/dev/null | head -n 3)
        elif ((rc != 0)); then
            die "smoke: zofuzz run --target $t failed to run (exit $rc)"
        fi
    done
    ((${#failed[@]} == 0)) || die "smoke: crashes found in ${failed[*]} (inputs under $work/<target>-$policy/crashes-*)"
    say "smoke: ${FUZZ_TARGETS[*]} ran ${secs}s each without a crash"
}

mode_msan() {
    ensure_deps
    command -v clang >/dev/null 2>&1 || die "clang not found"
    # C only: libc is the only uninstrumented code, which MSan intercepts.
    # No cmocka (not MSan-instrumented), no engine (replay drivers only).
    CC=clang CFLAGS="-fsanitize=memory -fsanitize-memory-track-origins=2 -fno-omit-frame-pointer -g -O1" \
        configure build-msan -DCMAKE_BUILD_TYPE= -DBUILD_TESTING=OFF -DZO_SANITIZE=OFF \
        -DZO_FUZZ_ENGINE= -DZO_FUZZ_INSTRUMENT=OFF -DZO_NCCL=OFF -DZO_MPI=OFF
    cmake --build build-msan -j"$JOBS" --target fuzz_hooks_replay fuzz_api_replay \
        fuzz_scn_parse_replay zofuzz >&2
    export MSAN_OPTIONS="${MSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
    replay_all build-msan
    local f n=0
    for f in corpus/models/*.scn corpus/regressions/*.scn; do
        build-msan/fuzz/zofuzz verify "$f" >build-msan/verify.log 2>&1 || {
            cat build-msan/verify.log >&2; die "msan: zofuzz verify $f failed"; }
        n=$((n + 1))
    done
    say "msan: zofuzz verify: $n scenario files clean"
    build-msan/fuzz/zofuzz check --seed 1 --trials 300 --policy per-call --invariants no-I8 --no-minimize \
        >build-msan/smoke.log 2>&1 || { tail -n 40 build-msan/smoke.log >&2; die "msan: zofuzz check failed"; }
    say "msan: zofuzz check --seed 1 --trials 300 clean"
    say "msan: harness clean under MemorySanitizer"
}

mode_valgrind() {
    ensure_deps
    command -v valgrind >/dev/null 2>&1 || die "valgrind not found (apt-get install valgrind)"
    local cc=gcc
    command -v clang >/dev/null 2>&1 && cc=clang
    # DWARF 4: valgrind 3.16 cannot read clang 14's default DWARF 5
    CC=$cc configure build-valgrind -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gdwarf-4" \
        -DBUILD_TESTING=ON -DZO_SANITIZE=OFF -DZO_FUZZ_ENGINE= -DZO_NCCL=OFF -DZO_MPI=OFF -DZO_POISON=ON
    local units=() f
    for f in tests/unit/test_*.c; do units+=("$(basename "$f" .c)"); done
    cmake --build build-valgrind -j"$JOBS" --target "${units[@]}" fuzz_hooks_replay fuzz_api_replay \
        fuzz_scn_parse_replay >&2
    CC=$cc build_reliability build-valgrind/reliability -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gdwarf-4" -DZO_SANITIZE=OFF -DZO_POISON=ON
    # memcheck verdict: exit 99 on an error; "ERROR SUMMARY: 0 errors" must be
    # in the log (a valgrind that gave up exits 1 without one)
    local vg=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
              --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
              --track-origins=yes)
    local bad=0 u
    vg_clean() { grep -q 'ERROR SUMMARY: 0 errors' "$1" && ! grep -q "I can't recover" "$1"; }
    for u in "${units[@]}"; do
        if "${vg[@]}" "build-valgrind/$u" >"build-valgrind/$u.valgrind.log" 2>&1 &&
            vg_clean "build-valgrind/$u.valgrind.log"; then
            say "valgrind: $u clean"
        else
            bad=1; tail -n 60 "build-valgrind/$u.valgrind.log" >&2; say "valgrind: $u FAILED"
        fi
    done
    # reliability: every backend fault; allocation failure on a small
    # scenario and the public-API scenario (the model loop is too slow here)
    local rel=(build-valgrind/reliability/reliability_backend_fault
               "build-valgrind/reliability/reliability_alloc_fail $ROOT/corpus/regressions/tied-params.scn")
    for u in "${rel[@]}"; do
        local log rc=0
        log="build-valgrind/$(basename "${u%% *}").valgrind.log"
        # shellcheck disable=SC2086
        "${vg[@]}" $u >"$log" 2>&1 || rc=$?
        if ! vg_clean "$log"; then
            bad=1; tail -n 60 "$log" >&2; say "valgrind: $(basename "${u%% *}") memcheck errors or valgrind failed"
        elif ((rc == 0)); then
            say "valgrind: $(basename "${u%% *}") clean"
        elif ((rc == 99)); then
            bad=1; tail -n 60 "$log" >&2; say "valgrind: $(basename "${u%% *}") memcheck errors"
        else
            # a test verdict, not a memory error: the reliability step reports it
            say "valgrind: $(basename "${u%% *}") memcheck clean; the test itself exited $rc (see $log)"
        fi
    done
    replay_all build-valgrind "${vg[@]}" || bad=1
    ((bad == 0)) || die "valgrind memcheck found errors (logs: build-valgrind/*.valgrind.log)"
    say "valgrind: unit tests and corpus replays clean"
}

# build_reliability DIR [cmake args] : the standalone tests/reliability build
build_reliability() {
    local dir="$1"; shift
    cmake -S "$ROOT/tests/reliability" -B "$dir" -DZO_NCCL=OFF -DZO_FUZZ_ENGINE= "$@" >&2
    cmake --build "$dir" -j"$JOBS" >&2
}

mode_reliability() {
    ensure_deps
    CC=clang build_reliability build-reliability -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g" -DZO_SANITIZE=ON
    cd build-reliability
    ctest --output-on-failure --no-tests=error --timeout 1800 -j"$JOBS"
}

mode_coverage() {
    ensure_deps
    command -v clang >/dev/null 2>&1 || die "clang not found"
    local profdata llvmcov v
    v="$(clang_major)"
    profdata="$(command -v "llvm-profdata-$v" || command -v llvm-profdata || true)"
    llvmcov="$(command -v "llvm-cov-$v" || command -v llvm-cov || true)"
    [[ -n "$profdata" && -n "$llvmcov" ]] || die "llvm-profdata/llvm-cov not found (apt-get install llvm-$v)"
    local B="$ROOT/build-coverage"
    local covflags="-fprofile-instr-generate -fcoverage-mapping -O0 -g"
    CC=clang CFLAGS="$covflags" configure "$B" -DCMAKE_BUILD_TYPE= -DBUILD_TESTING=ON \
        -DZO_SANITIZE=OFF -DZO_FUZZ_ENGINE= -DZO_FUZZ_INSTRUMENT=OFF -DZO_NCCL=OFF -DZO_POISON=ON
    build_dir "$B"
    CC=clang CFLAGS="$covflags" build_reliability "$B/reliability" -DCMAKE_BUILD_TYPE= -DZO_SANITIZE=OFF -DZO_POISON=ON
    rm -rf "$B/profiles"; mkdir -p "$B/profiles"
    export LLVM_PROFILE_FILE="$B/profiles/%p-%m.profraw"
    # 1. the test suites (a failing test does not stop the report: the
    #    coverage of what ran is still measured; the failures are listed),
    #    less the long oracle runs that ./build.sh test already made and
    #    that add no runtime coverage (DeepSpeed difftests, the exported
    #    upstream scripts, the model captures; the full sets, label long)
    local rc=0
    (cd "$B" && ctest --timeout 900 -j"$JOBS" -LE long -E '^(tools/difftest_deepspeed|corpus/upstream_findings|tools/capture_)' >"$B/ctest.log" 2>&1) || rc=$?
    grep -E 'tests passed|\*\*\*Failed|Not Run|Timeout' "$B/ctest.log" >&2 || true
    (cd "$B/reliability" && ctest --timeout 1800 -j"$JOBS" >"$B/ctest-reliability.log" 2>&1) || rc=$?
    grep -E 'tests passed|\*\*\*Failed' "$B/ctest-reliability.log" >&2 || true
    # 2. every corpus through the replay drivers
    replay_all "$B" || rc=$?
    unset LLVM_PROFILE_FILE
    # 3. merge and report
    "$profdata" merge -sparse "$B"/profiles/*.profraw -o "$B/zoffload.profdata"
    local objs=() o first=""
    while IFS= read -r o; do
        if [[ -z "$first" ]]; then first="$o"; else objs+=(-object "$o"); fi
    done < <(find "$B" -name CMakeFiles -prune -o -type f -perm -u+x ! -name '*.so*' -print |
                 while IFS= read -r o; do [[ "$(head -c4 "$o" | tail -c3)" == ELF ]] && echo "$o"; done | sort)
    [[ -n "$first" ]] || die "coverage: no instrumented binaries found in $B"
    local srcs=()
    for o in runtime/*.c; do [[ "$o" == runtime/backend_nccl* ]] || srcs+=("$ROOT/$o"); done
    "$llvmcov" report "$first" "${objs[@]}" -instr-profile="$B/zoffload.profdata" "${srcs[@]}" \
        >"$B/report-runtime.txt"
    "$llvmcov" report "$first" "${objs[@]}" -instr-profile="$B/zoffload.profdata" \
        -ignore-filename-regex='(tests|examples|bench|tools)/' >"$B/report-all.txt"
    rm -rf "$B/html"
    "$llvmcov" show "$first" "${objs[@]}" -instr-profile="$B/zoffload.profdata" -format=html \
        -show-branches=count -show-line-counts-or-regions -output-dir="$B/html" \
        -ignore-filename-regex='(tests|examples|bench|tools)/' >/dev/null
    # uncovered runtime lines: "file:line: code"
    "$llvmcov" show "$first" "${objs[@]}" -instr-profile="$B/zoffload.profdata" "${srcs[@]}" \
        -format=text -show-line-counts >"$B/show-runtime.txt"
    awk -v root="$ROOT/" '
        /^\/.*\.c:$/ { f = substr($0, 1, length($0) - 1); sub(root, "", f); next }
        match($0, /^ *[0-9]+\| *0\|/) {
            split($0, a, "|"); ln = a[1] + 0; code = substr($0, index($0, a[3]))
            sub(/^ */, "", code); print f ":" ln ": " code }' "$B/show-runtime.txt" >"$B/uncovered-runtime.txt"
    cat "$B/report-runtime.txt" >&2
    local total
    total="$(grep '^TOTAL' "$B/report-runtime.txt")"
    # TOTAL regions missed cover functions missed cover lines missed cover branches missed cover
    read -r _ _ _ regc _ _ funcc _ _ linec _ _ brc <<<"$total"
    echo "coverage runtime/ (runtime/*.c without backend_nccl*.c): lines $linec, branches $brc, functions $funcc, regions $regc; uncovered lines: $(wc -l <"$B/uncovered-runtime.txt") (build-coverage/uncovered-runtime.txt); HTML: build-coverage/html/index.html" |
        tee "$B/summary.txt"
    ((rc == 0)) || say "coverage: some tests failed while measuring (see $B/ctest*.log); the figures cover what ran"
}

not_yet() {
    die "mode '$1' is not implemented yet ($2)"
}

# ---------------------------------------------------------------------------

main() {
mode="${1:-}"
if [[ -z "$mode" && -n "${LIB_FUZZING_ENGINE:-}" && -n "${OUT:-}" ]]; then
    mode=oss-fuzz
fi
[[ $# -gt 0 ]] && shift

# modes that take no arguments refuse extra ones instead of ignoring them
case "$mode" in
    ""|test|test-long|fuzz|oss-fuzz|deps|replay|msan|valgrind|reliability|coverage)
        if [[ $# -gt 0 ]]; then
            usage >&2
            die "mode '${mode:-default}' takes no arguments (got: $*)"
        fi ;;
esac

case "$mode" in
    "")          mode_default ;;
    test)        mode_test ;;
    test-long)   mode_test_long ;;
    fuzz)        mode_fuzz ;;
    run)         mode_run "$@" ;;
    oss-fuzz)    mode_oss_fuzz ;;
    deps)        ensure_deps ;;
    help|-h|--help) usage ;;
    bench)
        [[ -x bench/run.sh ]] || not_yet bench "benchmarks (bench/run.sh)"
        exec bench/run.sh "$@" ;;
    replay)      mode_replay ;;
    smoke)       mode_smoke "$@" ;;
    msan)        mode_msan ;;
    valgrind)    mode_valgrind ;;
    reliability) mode_reliability ;;
    coverage)    mode_coverage ;;
    oracle)      ensure_deps; exec tools/oracle_venv.sh "${@:---current}" ;;
    gpu)         exec tests/gpu/run.sh "$@" ;;
    *)           usage >&2; die "unknown mode '$mode'" ;;
esac
}

# one line: bash has read all of it before main runs, so editing this file
# while a long mode runs cannot derail the rest of the script
main "$@"; exit $?
