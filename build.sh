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

# The work of each mode lives beside this dispatcher: tools/deps.sh
# installs what is missing, tools/ci/builds.sh holds the build modes and
# tools/ci/checks.sh the CI and reliability modes; the build variants'
# flags are CMakePresets.json's.
# shellcheck source=tools/deps.sh
source "$ROOT/tools/deps.sh"
# shellcheck source=tools/ci/builds.sh
source "$ROOT/tools/ci/builds.sh"
# shellcheck source=tools/ci/checks.sh
source "$ROOT/tools/ci/checks.sh"

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
    deps)        exec tools/deps.sh ;;
    help|-h|--help) usage ;;
    bench)       exec bench/run.sh "$@" ;;
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
