# Sourced by ./build.sh (not run on its own): the build modes: the default library build, test, test-long, fuzz, run and
# the OSS-Fuzz build.
# Each function is one build.sh mode or a piece of one; ROOT, JOBS, say and
# die come from build.sh.  The build variants' flags are CMakePresets.json's
# presets (release, test, fuzz, msan, valgrind, coverage).

# configure DIR [cmake args...] : a configure without a preset (the
# OSS-Fuzz build, whose flags come from its environment); the first
# configure of DIR fixes the compiler (CC) - later runs only refresh the cache.
configure() {
    local dir="$1"; shift
    cmake -S "$ROOT" -B "$dir" "$@" >&2
}

# configure_preset NAME [cmake args...] : CMakePresets.json's preset NAME
# (its binaryDir, compiler and flags)
configure_preset() {
    local name="$1"; shift
    (cd "$ROOT" && cmake --preset "$name" "$@" >&2)
}

build_dir() {
    cmake --build "$1" -j"$JOBS" >&2
}

# The sanitized builds of `test` and `fuzz`/`run` (presets test and fuzz:
# clang, ASan+UBSan, libFuzzer, no NDEBUG: the checks stay in; -O1 -g for
# the tests, -O2 -g for the fuzzers: more executions a second for the same
# coverage, docs/fuzzing.md).
configure_sanitized() {
    command -v clang >/dev/null 2>&1 || die "clang not found (run ./build.sh deps)"
    configure_preset "$1"
}

mode_default() {
    ensure_deps
    local cc="${CC:-}"
    if [[ -z "$cc" ]] && command -v clang >/dev/null 2>&1; then cc=clang; fi
    # A plain library build: no sanitizers, no coverage instrumentation
    # (libzoffload.so must load into any program), so no engine binaries
    # either - those come from `./build.sh fuzz` (engine-less replay drivers
    # and tools are built here).
    CC="${cc:-cc}" configure_preset release
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

# The test build (preset test): ASan+UBSan, libFuzzer, the 0xA5 poison fill
# of gathered buffers on (ZO_POISON: a read before the gather completed is
# visibly wrong; stated in the preset so that no cache entry can turn it off).
build_test() {
    ensure_deps
    ensure_oracle
    configure_sanitized test
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
    configure_sanitized fuzz
    build_dir build-fuzz
    say "fuzz targets in build-fuzz/fuzz/"
}

mode_run() {
    if [[ ! -f build-fuzz/CMakeCache.txt ]]; then
        ensure_deps
        configure_sanitized fuzz
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
