#!/usr/bin/env bash
# tests/gpu/run.sh - the one prepared GPU check of the NCCL backend.
# About 5 minutes on a machine with one or more NVIDIA GPUs, one command:
#
#   tests/gpu/run.sh [--build-only | --no-build]
#
# Steps (each with its own timeout; a failing step does not stop the others):
#   build      build-gpu/: gcc, RelWithDebInfo, no sanitizers, -DZO_NCCL=ON
#              (fails if CUDA/NCCL are not found), unit tests, examples
#   ctest      the whole ctest suite of build-gpu/ (host-backend unit tests,
#              fuzz tests, nccl/test_backend_nccl, examples/mlp_trainer) with
#              ZO_NCCL_TEST_EXPECT_DEVICE=1, so "no device" is a failure here
#   nccl-w1    test_backend_nccl with ZO_NCCL_TEST_WORLD=1 (world size 1),
#              including the exchange op (1..256 bytes) and a runtime with
#              verify_collectives = 1 (one fingerprint exchange per collective)
#   nccl-wall  test_backend_nccl over every GPU (one thread per rank), if > 1:
#              all-gather, reduce-scatter and exchange (rank-order bytes)
#   trainer    examples/mlp_trainer --nccl --check: one process per GPU
#              (RANK/WORLD_SIZE/LOCAL_RANK + the file bootstrap), loss halves
#   replay     the shipped corpus (corpus/seeds|regressions/fuzz_hooks)
#              through fuzz_hooks_nccl_replay: every gathered parameter of
#              the NCCL backend compared with the host backend's
#   fuzz60     fuzz_hooks_nccl (libFuzzer, clang) for 60 s, same comparison
#   bench      nccl_bench: all-gather GB/s vs cudaMemcpyAsync D2D, same sizes,
#              and microseconds per 64-byte exchange (the fingerprint cost)
#
# Results: $ZO_GPU_OUT, else $OUT (the device runner's output folder), else
# build-gpu/: gpu-results.md (summary table, key numbers) and one log per
# step.  Exit status: 0 when every step that ran passed.
# Environment: ZO_GPU_OUT (results folder), ZO_GPU_BUILD (build folder,
# default build-gpu; the fuzz build is <it>-fuzz), ZO_GPU_JOBS (make -j).
#
# --build-only builds build-gpu/ (and build-gpu-fuzz/) here and stops: a
# machine with the CUDA toolkit but no GPU can prepare the binaries, which
# then travel with the tree (runner "carry": build-gpu, build-gpu-fuzz) to a
# GPU machine that runs `tests/gpu/run.sh --no-build`.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
MODE="${1:-all}"
# one optional argument; anything else is refused before any build
if (($# > 1)) || [[ $MODE != all && $MODE != --build-only && $MODE != --no-build ]]; then
    echo "tests/gpu/run.sh: usage: tests/gpu/run.sh [--build-only | --no-build] (got: $*)" >&2
    exit 2
fi
B="${ZO_GPU_BUILD:-build-gpu}"
BF="${B}-fuzz"
JOBS="${ZO_GPU_JOBS:-$(nproc 2>/dev/null || echo 4)}"
OUTDIR="${ZO_GPU_OUT:-${OUT:-$ROOT/$B}}"
mkdir -p "$OUTDIR"
RES="$OUTDIR/gpu-results.md"
T0=$(date +%s)
FAILED=0
NGPU=0
if command -v nvidia-smi >/dev/null 2>&1; then
    NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
fi

note() { printf '%s\n' "$*" >>"$RES"; printf '[gpu] %s\n' "$*" >&2; }

# step NAME TIMEOUT_S CMD... : runs CMD, log in $OUTDIR/NAME.log, one table row
step() {
    local name="$1" tmo="$2"; shift 2
    local log="$OUTDIR/$name.log" t1 rc
    t1=$(date +%s)
    printf '[gpu] %s: %s\n' "$name" "$*" >&2
    timeout --kill-after=10 "$tmo" "$@" >"$log" 2>&1
    rc=$?
    local dt=$(( $(date +%s) - t1 )) verdict=PASS
    if ((rc == 124 || rc == 137)); then verdict="FAIL (timeout ${tmo}s)"; elif ((rc)); then verdict="FAIL (rc $rc)"; fi
    ((rc)) && FAILED=1
    printf '| %s | %s | %ss | `%s` |\n' "$name" "$verdict" "$dt" "$*" >>"$RES"
    printf '[gpu] %s: %s in %ss\n' "$name" "$verdict" "$dt" >&2
    return $rc
}
skip() { printf '| %s | SKIPPED | - | %s |\n' "$1" "$2" >>"$RES"; printf '[gpu] %s: skipped: %s\n' "$1" "$2" >&2; }

{
    echo "# zoffload GPU check (tests/gpu/run.sh)"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(hostname), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (+ local changes)')"
    if command -v nvidia-smi >/dev/null 2>&1; then
        echo "- GPUs:"
        nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/  - /'
    else
        echo "- nvidia-smi: not found"
    fi
    echo "- CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}; tools: cmake $(cmake --version 2>/dev/null | head -n1 | awk '{print $3}'), gcc $(gcc -dumpversion 2>/dev/null), clang $(clang --version 2>/dev/null | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -n1), cmocka $(pkg-config --modversion cmocka 2>/dev/null || echo missing), mpirun $(command -v mpirun >/dev/null && echo yes || echo no)"
    if ((NGPU == 0)); then
        echo
        echo "**No GPU visible (nvidia-smi -L lists none): the device steps are expected to fail.**"
    fi
    echo
    echo "| step | result | time | command |"
    echo "| --- | --- | --- | --- |"
} >"$RES"

# ---------------------------------------------------------------------------
# build
# ---------------------------------------------------------------------------
if [[ "$MODE" != "--no-build" ]]; then
    step configure 120 cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZO_SANITIZE=OFF \
        -DZO_FUZZ_ENGINE= -DBUILD_TESTING=ON -DZO_NCCL=ON
    step build 300 cmake --build "$B" -j"$JOBS"
    if command -v clang >/dev/null 2>&1; then
        # libFuzzer build of fuzz_hooks_nccl: clang, no sanitizers (ASan and
        # the CUDA driver's address-space reservations do not mix)
        step configure-fuzz 120 env CC=clang cmake -S . -B "$BF" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            -DZO_SANITIZE=OFF -DZO_FUZZ_ENGINE=-fsanitize=fuzzer -DBUILD_TESTING=OFF -DZO_NCCL=ON
        if grep -q wrap_backend fuzz/sim.h 2>/dev/null; then
            step build-fuzz 300 cmake --build "$BF" -j"$JOBS" --target fuzz_hooks_nccl
        else
            skip build-fuzz "fuzz/sim.h has no zs_sim_opts.wrap_backend: fuzz_hooks_nccl is not built"
        fi
    else
        skip build-fuzz "clang not found"
    fi
fi
if [[ "$MODE" == "--build-only" ]]; then
    note ""
    note "build only: $(( $(date +%s) - T0 )) s"
    exit $FAILED
fi

# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------
export ZO_NCCL_TEST_EXPECT_DEVICE=1
if [[ -f "$B/CTestTestfile.cmake" ]]; then
    step ctest 300 ctest --test-dir "$B" --output-on-failure -j"$JOBS" --timeout 240
else
    skip ctest "no $B"
fi

TB="$B/test_backend_nccl"
if [[ -x "$TB" ]]; then
    step nccl-w1 120 env ZO_NCCL_TEST_WORLD=1 "$TB"
    if ((NGPU > 1)); then
        step nccl-wall 180 env ZO_NCCL_TEST_WORLD="$NGPU" "$TB"
    else
        skip nccl-wall "one GPU: world size 1 is every GPU present"
    fi
else
    skip nccl-w1 "$TB not built (cmocka missing?)"
fi

# one process per GPU: launcher variables + the file bootstrap
if [[ -x "$B/examples/mlp_trainer" ]]; then
    step trainer-w1 120 tests/gpu/launch_ranks.sh 1 "$B/examples/mlp_trainer" --nccl --check --steps 300 \
        --bootstrap-dir @DIR@
    if ((NGPU > 1)); then
        step trainer-wall 180 tests/gpu/launch_ranks.sh "$NGPU" "$B/examples/mlp_trainer" --nccl --check \
            --steps 300 --bootstrap-dir @DIR@
    fi
else
    skip trainer "$B/examples/mlp_trainer not built"
fi

# ---------------------------------------------------------------------------
# corpus replay and fuzzing through the mirror backend (host vs NCCL)
# ---------------------------------------------------------------------------
CORPUS=()
for d in corpus/seeds/fuzz_hooks corpus/regressions/fuzz_hooks; do
    [[ -d "$d" ]] && CORPUS+=("$d")
done
if [[ -x "$B/fuzz_hooks_nccl_replay" ]]; then
    if ((${#CORPUS[@]})); then
        step replay 240 "$B/fuzz_hooks_nccl_replay" "${CORPUS[@]}"
    else
        skip replay "no corpus/seeds/fuzz_hooks or corpus/regressions/fuzz_hooks in this tree"
    fi
else
    skip replay "$B/fuzz_hooks_nccl_replay not built (fuzz/sim.h needs zs_sim_opts.wrap_backend)"
fi
if [[ -x "$BF/fuzz_hooks_nccl" ]]; then
    work="$(mktemp -d)"
    step fuzz60 120 "$BF/fuzz_hooks_nccl" -max_total_time=60 -timeout=30 -rss_limit_mb=16384 \
        -artifact_prefix="$OUTDIR/" "$work" "${CORPUS[@]}"
    rm -rf "$work"
else
    skip fuzz60 "$BF/fuzz_hooks_nccl not built"
fi

# ---------------------------------------------------------------------------
# benchmark
# ---------------------------------------------------------------------------
if [[ -x "$B/nccl_bench" ]]; then
    step bench-w1 180 "$B/nccl_bench" --iters 50 --max-mib 1024 --world 1
    if ((NGPU > 1)); then
        step bench-wall 180 "$B/nccl_bench" --iters 50 --max-mib 1024 --world "$NGPU"
    fi
else
    skip bench "$B/nccl_bench not built"
fi

# ---------------------------------------------------------------------------
# key numbers
# ---------------------------------------------------------------------------
{
    echo
    echo "## Key output"
    for f in ctest nccl-w1 nccl-wall; do
        [[ -f "$OUTDIR/$f.log" ]] || continue
        echo; echo "### $f"; echo '```'
        grep -E 'tests passed|tests failed|PASSED|FAILED|SKIPPED|CUDA device|device\(s\)|exchange|The following tests' "$OUTDIR/$f.log" | head -n 30
        echo '```'
    done
    for f in trainer-w1 trainer-wall replay fuzz60 bench-w1 bench-wall; do
        [[ -f "$OUTDIR/$f.log" ]] || continue
        echo; echo "### $f"; echo '```'
        case "$f" in
            trainer*) grep -E 'mlp_trainer|step +0 |step +299' "$OUTDIR/$f.log" | head -n 20 ;;
            replay) grep -E 'fuzz_hooks_nccl|files|ran|violation|mismatch' "$OUTDIR/$f.log" | tail -n 15 ;;
            fuzz60) grep -E 'fuzz_hooks_nccl|Done|DONE|stat::|ERROR|mismatch|#[0-9]+\s+DONE' "$OUTDIR/$f.log" | tail -n 15 ;;
            bench*) cat "$OUTDIR/$f.log" ;;
        esac
        echo '```'
    done
    echo
    echo "Total: $(( $(date +%s) - T0 )) s; overall: $([[ $FAILED == 0 ]] && echo PASS || echo FAIL)"
} >>"$RES"
printf '[gpu] results: %s\n' "$RES" >&2
exit $FAILED
