#!/usr/bin/env bash
# bench/run.sh - zoffload's benchmarks (docs/benchmarks.md); the lead wires
# it as `./build.sh bench [--quick]` (build.sh: exec bench/run.sh "$@").
#
# usage: bench/run.sh [--quick] [--only LIST] [--out DIR] [--no-build] [--baseline REV]
#
#   --quick     the short run (under 2 minutes on 2 cores after the builds):
#               fewer repetitions and sizes, fuzz speed 3 s per engine and
#               target, time-to-bug of reset-on-forward only, 2 trials
#               capped at 10 s per engine; every table says it is a quick run
#   --only L    comma list of hooks,gather,fuzzspeed,ttb,memory,verify,scaling (default: all)
#   --out DIR   results directory; writes DIR/latest.md, DIR/*.png and the
#               raw DIR/raw/*.tsv.  Default: bench/results for the full run,
#               bench/results/quick for the quick run, bench/results/partial
#               (not committed; emptied first) with --only a subset, so that a
#               shorter run never replaces the committed results
#   --no-build  use the build-bench-* directories as they are
#   --baseline REV  also measure commit REV in the same run: its tree
#               (git archive) is built into build-bench-base/ with the same
#               four configurations, and the hook, gather, fuzz speed,
#               time-to-bug and scaling benchmarks run with its binaries
#               right after each of this tree's (DIR/raw/base/); latest.md
#               then gives REV's figure beside every goal
#
# Builds (clang; CMake, BUILD_TESTING=OFF, only the targets needed):
#   build-bench-o2    -O2 Release, no sanitizer, no fuzz engine: bench_hooks,
#                     bench_gather, bench_memory, bench_verify, bench_scaling,
#                     zofuzz (unguided generation)
#   build-bench-lf    -O2, libFuzzer (-fsanitize=fuzzer), no sanitizer
#   build-bench-asan  -O2 -g, ASan+UBSan, libFuzzer (as ./build.sh fuzz)
#   build-bench-afl   afl-clang-fast -O2, AFL++ persistent mode (libAFLDriver)
# (the three engine builds also make bench/fuzz_empty and bench/fuzz_wide
# where the tree has them)
# Missing tools are installed with apt-get when possible (gnuplot-nox,
# afl++); a benchmark whose tool is missing is marked absent in the table.
set -euo pipefail

# The whole script is one function, parsed before anything runs: editing
# this file while a run is in progress cannot derail that run.
main() {
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

ALL="hooks,gather,fuzzspeed,ttb,memory,verify,scaling"
QUICK=0 ONLY="$ALL" OUT="" BUILD=1 BASE_REV=""
seen=" "
while (($#)); do
    # an option given twice is a mistake, not "the last one wins"
    case "$1" in
        --quick|--only|--out|--no-build|--baseline)
            [[ $seen != *" $1 "* ]] || { echo "bench/run.sh: $1 given twice" >&2; exit 2; }
            seen+="$1 " ;;
    esac
    case "$1" in
        --quick) QUICK=1 ;;
        --only) ONLY="${2:-}"; [[ -n "$ONLY" ]] || { echo "bench/run.sh: --only needs a list (any of $ALL)" >&2; exit 2; }
                shift ;;
        --out) OUT="${2:-}"; [[ -n "$OUT" && "$OUT" != -* ]] || { echo "bench/run.sh: --out needs a directory" >&2; exit 2; }
               shift ;;
        --no-build) BUILD=0 ;;
        --baseline) BASE_REV="${2:-}"; [[ -n "$BASE_REV" ]] || { echo "bench/run.sh: --baseline needs a commit" >&2; exit 2; }
                    shift ;;
        -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench/run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
want() { [[ ",$ONLY," == *",$1,"* ]]; }
[[ "$ONLY" =~ ^[a-z,]+$ ]] || { echo "bench/run.sh: --only: a comma list of $ALL" >&2; exit 2; }
for b in ${ONLY//,/ }; do
    [[ ",$ALL," == *",$b,"* ]] || { echo "bench/run.sh: --only: unknown benchmark '$b' (any of $ALL)" >&2; exit 2; }
done
[[ -n "${ONLY//,/}" ]] || { echo "bench/run.sh: --only needs at least one of $ALL" >&2; exit 2; }
SUBSET=0
for b in ${ALL//,/ }; do want "$b" || SUBSET=1; done
if [[ -z "$OUT" ]]; then
    if ((SUBSET)); then OUT="bench/results/partial"
    elif ((QUICK)); then OUT="bench/results/quick"
    else OUT="bench/results"; fi
fi
BASE_SHA=""
if [[ -n "$BASE_REV" ]]; then
    BASE_SHA=$(git rev-parse --verify --quiet "$BASE_REV^{commit}") ||
        { echo "bench/run.sh: --baseline $BASE_REV: not a commit of this repository" >&2; exit 2; }
fi
say() { printf '[bench] %s\n' "$*" >&2; }

T_START=$(date +%s)
# the commit measured: taken at the start (others may commit during a run)
COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- runtime include fuzz bench ':!bench/results' 2>/dev/null || echo '+dirty')"
[[ ! -e "$OUT" || -d "$OUT" ]] || { echo "bench/run.sh: --out $OUT: not a directory" >&2; exit 2; }
# the default subset directory holds one run: no tables left from another
[[ "$OUT" == bench/results/partial ]] && rm -rf "$OUT"
mkdir -p -- "$OUT/raw"
RAW="$OUT/raw"
JOBS=2

# ------------------------------------------------------------------ tools
apt_install() {
    command -v apt-get >/dev/null 2>&1 || return 1
    local sudo=()
    [[ "$(id -u)" != 0 ]] && { command -v sudo >/dev/null 2>&1 || return 1; sudo=(sudo); }
    say "installing $*"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 || true
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1
}
if [[ "${ZO_NO_APT:-0}" != 1 ]]; then
    command -v gnuplot >/dev/null 2>&1 || apt_install gnuplot-nox || say "gnuplot not installed: no plots"
    if want fuzzspeed || want ttb; then
        command -v afl-fuzz >/dev/null 2>&1 || apt_install afl++ || say "afl++ not installed: AFL++ rows absent"
    fi
    command -v clang >/dev/null 2>&1 && command -v cmake >/dev/null 2>&1 || ./build.sh deps
fi

# ------------------------------------------------------------------ builds
cmake_build() { # src dir targets... (configure args in CFG_ARGS)
    local src="$1" dir="$2"; shift 2
    mkdir -p "$dir"
    local log="$dir/bench-build.log"
    cmake -S "$src" -B "$dir" "${CFG_ARGS[@]}" >"$log" 2>&1 || { cat "$log" >&2; return 1; }
    cmake --build "$dir" -j"$JOBS" --target "$@" >>"$log" 2>&1 || { tail -30 "$log" >&2; return 1; }
}
HAVE_AFL=0
command -v afl-fuzz >/dev/null 2>&1 && command -v afl-clang-fast >/dev/null 2>&1 &&
    [[ -f /usr/lib/afl/libAFLDriver.a ]] && HAVE_AFL=1
# bench/fuzz_empty and bench/fuzz_wide (the engine-only and engine-wide
# speed cells) where SRC has them: a baseline tree from before them has
# not, and its cell then reports the binary missing
engine_targets() {
    [[ -f "$1/bench/fuzz_empty.c" ]] && echo fuzz_empty
    [[ -f "$1/bench/fuzz_wide.c" ]] && echo fuzz_wide
    return 0
}

# the four configurations of SRC into PREFIX-o2, PREFIX-lf, PREFIX-afl, PREFIX-asan
build_all() { # src prefix
    local src="$1" pre="$2"
    say "building $pre-o2 (clang -O2)"
    CFG_ARGS=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS_RELEASE=-O2 -gdwarf-4 -DNDEBUG" -DBUILD_TESTING=OFF
              -DZO_SANITIZE=OFF -DZO_FUZZ_ENGINE= -DZO_NCCL=OFF)
    CC=clang cmake_build "$src" "$pre-o2" bench_hooks bench_gather bench_memory bench_verify bench_scaling zofuzz
    if want fuzzspeed || want ttb; then
        say "building $pre-lf (libFuzzer, -O2)"
        CFG_ARGS=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS_RELEASE=-O2 -gdwarf-4 -DNDEBUG" -DBUILD_TESTING=OFF
                  -DZO_SANITIZE=OFF -DZO_FUZZ_ENGINE=-fsanitize=fuzzer -DZO_NCCL=OFF)
        CC=clang cmake_build "$src" "$pre-lf" fuzz_hooks fuzz_api fuzz_scn_parse $(engine_targets "$src")
        if ((HAVE_AFL)); then
            say "building $pre-afl (afl-clang-fast -O2, libAFLDriver)"
            CFG_ARGS=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG" -DBUILD_TESTING=OFF
                      -DZO_SANITIZE=OFF -DZO_FUZZ_ENGINE=/usr/lib/afl/libAFLDriver.a -DZO_FUZZ_INSTRUMENT=OFF
                      -DZO_NCCL=OFF)
            CC=afl-clang-fast CXX=afl-clang-fast++ AFL_QUIET=1 cmake_build "$src" "$pre-afl" fuzz_hooks fuzz_api \
                fuzz_scn_parse $(engine_targets "$src")
        fi
    fi
    if want fuzzspeed; then
        say "building $pre-asan (libFuzzer, ASan+UBSan, -O2 -g)"
        CFG_ARGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g" -DBUILD_TESTING=OFF
                  -DZO_SANITIZE=ON -DZO_FUZZ_ENGINE=-fsanitize=fuzzer -DZO_NCCL=OFF)
        CC=clang cmake_build "$src" "$pre-asan" fuzz_hooks fuzz_api fuzz_scn_parse $(engine_targets "$src")
    fi
}
BASE_SRC=build-bench-base/src
if ((BUILD)); then
    build_all "$ROOT" build-bench
    if [[ -n "$BASE_REV" ]]; then
        # the baseline's own tree, as committed (nothing of this checkout's)
        say "baseline: $BASE_REV into $BASE_SRC"
        if [[ "$(cat build-bench-base/commit 2>/dev/null)" != "$BASE_SHA" ]]; then
            rm -rf build-bench-base
            mkdir -p "$BASE_SRC"
            git archive "$BASE_SHA" | tar -x -C "$BASE_SRC"
            echo "$BASE_SHA" >build-bench-base/commit
        fi
        build_all "$ROOT/$BASE_SRC" build-bench-base/b
    fi
elif [[ -n "$BASE_REV" && ( ! -x build-bench-base/b-o2/bench/bench_hooks ||
                            "$(cat build-bench-base/commit 2>/dev/null)" != "$BASE_SHA" ) ]]; then
    echo "bench/run.sh: --baseline $BASE_REV with --no-build needs build-bench-base/ built from that commit by an" \
         "earlier run" >&2; exit 2
fi
say "builds done ($(( $(date +%s) - T_START )) s)"
T_RUNS=$(date +%s)

# ------------------------------------------------------------------ runs
if ((QUICK)); then
    HOOK_MODS=100,1000,10000,100000 HOOK_REPS=3 HOOK_EVENTS=7e5
    TORCH_MODS=100,1000,10000 TORCH_REPS=2 TORCH_EVENTS=3e4
    GATHER_SIZES=4096,65536,1048576,16777216,67108864 GATHER_REPS=3 GATHER_MIN=1.28e8
    SPEED_S=3 TTB_TRIALS=2 TTB_CAP=10 TTB_POLICIES=reset-on-forward
else
    HOOK_MODS=100,1000,10000,100000 HOOK_REPS=7 HOOK_EVENTS=4e6
    TORCH_MODS=100,1000,10000,100000 TORCH_REPS=3 TORCH_EVENTS=2e5
    GATHER_SIZES=4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456 GATHER_REPS=5 GATHER_MIN=1e9
    SPEED_S=30 TTB_TRIALS=10 TTB_CAP=120 TTB_POLICIES=reset-on-forward,lazy-init,init-at-register
fi
# Each benchmark runs for this tree (build-bench-*, into $RAW) and, with
# --baseline, right after for the baseline's binaries (build-bench-base/b-*,
# into $RAW/base), so that both see the same machine state.
SIDES=("build-bench|$RAW")
if [[ -n "$BASE_REV" ]]; then
    mkdir -p "$RAW/base"
    SIDES+=("build-bench-base/b|$RAW/base")
    git rev-parse --short "$BASE_SHA" >"$RAW/base/commit"
fi
# callgrind with its cache simulation (1 MiB 8-way last level, 64-byte
# lines) over the timed steps only: instructions and last-level misses per
# event, figures the machine's load cannot disturb
cg_hooks() { # bench_hooks-binary out-tsv tag n [bench_hooks args...]
    local bin="$1" tsv="$2" tag="$3" n="$4"; shift 4
    local cg="$tsv.cg.out" log="$tsv.cg.tsv"
    if valgrind --tool=callgrind --cache-sim=yes --LL=1048576,8,64 --toggle-collect=timed_step \
        --callgrind-out-file="$cg" "$bin" --modules "$n" --reps 1 --min-events 7e5 "$@" >"$log" 2>/dev/null; then
        # the counts in the order Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
        # (callgrind names its columns on the events: line)
        local sum ev
        sum=$(awk '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
                   /^summary:/ { n = split("Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw", want, " "); s = ""
                                 for (i = 1; i <= n; i++) s = s (i > 1 ? "\t" : "") (want[i] in col ? $(col[want[i]] + 1) : "")
                                 print s; exit }' "$cg")
        ev=$(awk -F'\t' '$1=="hooks"{print $7}' "$log" | head -n1)
        [[ -n "$sum" && -n "$ev" ]] && printf '%s\t%s\t%s\t%s\n' "$tag" "$n" "$ev" "$sum" >>"$tsv"
    fi
    rm -f "$cg" "$log"
}
# a benchmark that fails leaves its raw file incomplete; the report says so
if want hooks; then
    for side in "${SIDES[@]}"; do
        pre=${side%%|*} R=${side#*|} B=${pre}-o2/bench
        say "1/7 hook cost: zoffload (C), modules $HOOK_MODS ($pre)"
        "$B/bench_hooks" --modules "$HOOK_MODS" --reps "$HOOK_REPS" --min-events "$HOOK_EVENTS" >"$R/hooks.tsv" ||
            say "bench_hooks failed"
        # the same with one regime for every N (released at every post-hook, at
        # most 50 parameters live): DeepSpeed's defaults (max_live_parameters =
        # max_reuse_distance = 1e9 in 0.19.8 and 0.15.4) keep a model of <= 1e9
        # elements gathered from forward to backward and re-gather larger ones
        say "1/7 hook cost: zoffload (C), uniform regime (max_reuse_distance 0, max_live_parameters 5e7) ($pre)"
        "$B/bench_hooks" --modules "$HOOK_MODS" --reps "$HOOK_REPS" --min-events "$HOOK_EVENTS" --reuse 0 \
            --max-live 5e7 >"$R/hooks_uniform.tsv" || say "bench_hooks (uniform) failed"
        # instructions and cache misses per event: full run (or a baseline
        # comparison) only, callgrind is slow
        : >"$R/hooks_cg.tsv"
        if { ((!QUICK)) || [[ -n "$BASE_REV" ]]; } && command -v valgrind >/dev/null 2>&1; then
            for n in ${HOOK_MODS//,/ }; do
                say "1/7 hook cost: callgrind, N=$n ($pre)"
                cg_hooks "$B/bench_hooks" "$R/hooks_cg.tsv" defaults "$n"
            done
            n=${HOOK_MODS##*,}
            say "1/7 hook cost: callgrind, N=$n, uniform regime ($pre)"
            cg_hooks "$B/bench_hooks" "$R/hooks_cg.tsv" uniform "$n" --reuse 0 --max-live 5e7
        fi
    done
    if [[ -x /usr/bin/python3 ]] && /usr/bin/python3 -c 'import torch' 2>/dev/null; then
        say "1/7 hook cost: PyTorch baseline (python3-torch), modules $TORCH_MODS"
        /usr/bin/python3 bench/torch_hooks_baseline.py --modules "$TORCH_MODS" --reps "$TORCH_REPS" \
            --min-events "$TORCH_EVENTS" >"$RAW/torch.tsv" || say "torch baseline failed"
    else
        say "no /usr/bin/python3 with torch: PyTorch baseline absent"; : >"$RAW/torch.tsv"
    fi
fi
if want gather; then
    for side in "${SIDES[@]}"; do
        pre=${side%%|*} R=${side#*|} B=${pre}-o2/bench
        say "2/7 host gather throughput vs memcpy, W = 1, 8, 64 ($pre)"
        "$B/bench_gather" --sizes "$GATHER_SIZES" --worlds 1,8,64 --reps "$GATHER_REPS" --min-bytes "$GATHER_MIN" \
            >"$R/gather.tsv" || say "bench_gather failed"
    done
fi
if want fuzzspeed; then
    for side in "${SIDES[@]}"; do
        pre=${side%%|*} R=${side#*|}
        say "3/7 fuzzing speed: ${SPEED_S} s per target and engine ($pre)"
        AFL_ARG=(); if ((HAVE_AFL)) && [[ -d "$pre-afl" ]]; then AFL_ARG=(--afl "$pre-afl"); fi
        /usr/bin/python3 bench/fuzzbench.py speed --seconds "$SPEED_S" --asan "$pre-asan" --lf "$pre-lf" \
            "${AFL_ARG[@]}" >"$R/fuzzspeed.tsv" || say "fuzz speed failed"
    done
fi
if want ttb; then
    for side in "${SIDES[@]}"; do
        pre=${side%%|*} R=${side#*|}
        say "4/7 time-to-bug: $TTB_TRIALS trials capped at $TTB_CAP s per policy and engine ($pre)"
        AFL_ARG=(); if ((HAVE_AFL)) && [[ -d "$pre-afl" ]]; then AFL_ARG=(--afl "$pre-afl"); fi
        /usr/bin/python3 bench/fuzzbench.py ttb --trials "$TTB_TRIALS" --cap "$TTB_CAP" --policies "$TTB_POLICIES" \
            --lf "$pre-lf" "${AFL_ARG[@]}" --o2 "$pre-o2" >"$R/ttb.tsv" || say "time-to-bug failed"
    done
fi
B=build-bench-o2/bench
if want memory; then
    say "5/7 memory: peak gathered numel vs minimum, blocking fetches"
    "$B/bench_memory" --latency 1,4,7 corpus/models/*.scn >"$RAW/memory.tsv" || say "bench_memory: a violation or failure"
fi
if want verify; then
    say "6/7 verify_collectives: ns per collective with and without the fingerprint exchange"
    if ((QUICK)); then vargs=(--iters 40 --reps 3); else vargs=(--iters 200 --reps 7); fi
    "$B/bench_verify" --worlds 1,2,4 --sizes 1024,1048576 "${vargs[@]}" >"$RAW/verify.tsv" || say "bench_verify failed"
fi
if want scaling; then
    # cost per item at 1e6 named modules / 2^20 aborted passes / a 2e5-deep
    # chain vs 1e4, in one run (goal <= 1.5)
    if ((QUICK)); then sargs=(--quick); else sargs=(); fi
    for side in "${SIDES[@]}"; do
        pre=${side%%|*} R=${side#*|}
        say "7/7 scaling: registration of 1e6 named modules, 2^20 nested passes aborted, a 2e5-deep chain vs 1e4 ($pre)"
        "$pre-o2/bench/bench_scaling" "${sargs[@]}" >"$R/scaling.tsv" || say "bench_scaling failed"
    done
fi
[[ -n "$BASE_REV" ]] || rm -rf "$RAW/base"

# ------------------------------------------------------------------ report
{
    echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit=$COMMIT"
    echo "nproc=$(nproc)"
    echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
    echo "mem_gib=$(awk '/MemTotal/ {printf "%.0f", $2/1048576}' /proc/meminfo)"
    echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "quick=$QUICK"
    echo "only=$ONLY"
    echo "subset=$SUBSET"
    echo "clang=$(clang --version | head -n1)"
    echo "torch=$(/usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo absent)"
    echo "afl=$(afl-fuzz -h 2>&1 | sed 's/\x1b\[[0-9;]*m//g' | sed -n 's/^afl-fuzz++\([0-9][^ ]*\).*/\1/p' | head -n1)"
    echo "gpu=$(command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | head -n1 || echo absent)"
    echo "elapsed_s=$(( $(date +%s) - T_START ))"
    echo "runs_s=$(( $(date +%s) - T_RUNS ))"
    echo "hook_mods=$HOOK_MODS torch_mods=$TORCH_MODS speed_s=$SPEED_S ttb_trials=$TTB_TRIALS ttb_cap=$TTB_CAP ttb_policies=$TTB_POLICIES"
} >"$RAW/machine.txt"
/usr/bin/python3 bench/report.py "$OUT"
say "done in $(( $(date +%s) - T_START )) s: $OUT/latest.md"
}

main "$@"; exit $?
