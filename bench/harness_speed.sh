#!/bin/bash
# harness_speed.sh - CPU time of the fuzz harness, side by side for several
# builds (bench/results/harness.md has the figures and how they were made).
#
#   bench/harness_speed.sh [--flat "B L ..."] [--reps K] [--runs N] [--small N]
#                          [--small-reps K] [--small-runs N] [--afl-execs N]
#                          [--only LIST] LABEL=BUILD_DIR ...
#
# For each build directory, what it has of:
#   zofuzz              `zofuzz repro FLAT.scn --quiet` on the flat scenarios of
#                       bench/gen_flat_scn.py (default 90x90 and 180x180 blocks x
#                       layers: 8,191 and 32,581 calls), and `zofuzz compile` of the
#                       same file (parse and validation only: it refuses files over
#                       the byte codec's bounds), so that the replay's share shows
#   fuzz_hooks_replay   every input of corpus/seeds/fuzz_hooks, K times (--reps, 20):
#                       CPU time per execution
#   fuzz_hooks          libFuzzer, -runs=N (--runs, 20000) -seed=1 on a copy of
#                       corpus/seeds/fuzz_hooks: executions per CPU second
# and the same on the small set: N (--small, 1000) random inputs of 1..256
# bytes from Python's random.Random(1) (2 of the 1,000 decode to all-ranks
# scenarios), K times through the replay binary (--small-reps, 20), and
# libFuzzer -runs=N (--small-runs, 100000) -seed=1 -max_len=256 on a copy of
# the set and from an empty corpus.  An AFL++ build of fuzz_hooks (afl-clang-fast, libAFLDriver's
# persistent mode) runs `afl-fuzz -E N` (--afl-execs, 100000) -s 1 instead,
# once on the small set and once on the seeds: executions per CPU second of
# afl-fuzz and the target together.
# --only takes a comma list of flat,seeds,small (default: all three).
# CPU time is user + sys of /usr/bin/time (other jobs on the machine change
# wall time, not this).  Run from the repository root.
set -euo pipefail
flat="90 90,180 180"
reps=20
runs=20000
small=1000
small_reps=20
small_runs=100000
afl_execs=100000
only="flat,seeds,small"
while [ $# -gt 0 ]; do
  case "$1" in
    --flat) flat="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --small) small="$2"; shift 2 ;;
    --small-reps) small_reps="$2"; shift 2 ;;
    --small-runs) small_runs="$2"; shift 2 ;;
    --afl-execs) afl_execs="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [options] LABEL=BUILD_DIR ... (--help)" >&2; exit 2; }
want() { [[ ",$only," == *",$1,"* ]]; }
builds=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
seeds=corpus/seeds/fuzz_hooks
nseeds=$(find "$seeds" -type f | wc -l)

cpu() { # cpu OUTFILE CMD... -> prints user+sys seconds
  local out=$1; shift
  /usr/bin/time -f "%U %S" -o "$tmp/time" "$@" > "$out" 2>&1 || true
  tail -n 1 "$tmp/time" | awk '{printf "%.2f", $1 + $2}'
}

IFS=, read -ra shapes <<< "$flat"
want flat || shapes=()
for s in "${shapes[@]}"; do
  set -- $s
  python3 bench/gen_flat_scn.py "$1" "$2" -o "$tmp/flat_$1x$2.scn"
done
mkdir "$tmp/small"
python3 - "$tmp/small" "$small" <<'PY'
import random, sys
r = random.Random(1)
for i in range(int(sys.argv[2])):
    n = r.randint(1, 256)
    open(f"{sys.argv[1]}/s{i:05d}", "wb").write(bytes(r.getrandbits(8) for _ in range(n)))
PY

rate() { awk -v t="$1" -v n="$2" 'BEGIN{printf "%.0f", (t > 0 ? n / t : 0)}'; }

libfuzzer() { # libfuzzer LABEL BIN CORPUS RUNS MAX_LEN WHAT
  rm -rf "$tmp/corpus" && cp -r "$3" "$tmp/corpus"
  local t n
  t=$(cpu "$tmp/out" "$2" -runs="$4" -seed=1 -max_len="$5" \
      -dict=fuzz/fuzz_hooks.dict -print_final_stats=1 "$tmp/corpus")
  n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/out")
  n=${n:-0}
  printf '| %s | fuzz_hooks -runs=%d -seed=1 -max_len=%d on %s (%s executions) | %s | %s exec/s |\n' \
    "$1" "$4" "$5" "$6" "$n" "$t" "$(rate "$t" "$n")"
}

afl() { # afl LABEL BIN CORPUS WHAT
  rm -rf "$tmp/afl"
  local t n
  t=$(cpu "$tmp/out" env AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 \
      AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 afl-fuzz -i "$3" -o "$tmp/afl" -E "$afl_execs" -s 1 -- "$2")
  n=$(sed -n 's/^execs_done *: *//p' "$tmp/afl/default/fuzzer_stats" 2>/dev/null)
  n=${n:-0}
  printf '| %s | afl-fuzz -E %d -s 1 on %s (%s executions) | %s | %s exec/s |\n' \
    "$1" "$afl_execs" "$4" "$n" "$t" "$(rate "$t" "$n")"
}

printf '| build | measurement | CPU s | per unit |\n|---|---|---|---|\n'
for arg in "${builds[@]}"; do
  label=${arg%%=*}
  dir=${arg#*=}
  if [ -x "$dir/fuzz/zofuzz" ] && want flat; then
    for s in "${shapes[@]}"; do
      set -- $s
      f="$tmp/flat_$1x$2.scn"
      t=$(cpu "$tmp/out" "$dir/fuzz/zofuzz" repro "$f" --quiet)
      calls=$((1 + $1 + $1 * $2))
      verdict=$(tail -c 200 "$tmp/out" | tr '\n' ' ' | sed 's/.*\(all invariants hold\|violated\).*/\1/')
      printf '| %s | repro --quiet, flat %sx%s (%s calls): %s | %s | |\n' "$label" "$1" "$2" "$calls" "$verdict" "$t"
      t=$(cpu "$tmp/out" "$dir/fuzz/zofuzz" compile "$f" -o /dev/null)
      printf '| %s | compile (parse + validate only), flat %sx%s | %s | |\n' "$label" "$1" "$2" "$t"
    done
  fi
  if [ -x "$dir/fuzz/fuzz_hooks_replay" ] && want seeds; then
    args=()
    for _ in $(seq "$reps"); do args+=("$seeds"); done
    t=$(cpu "$tmp/out" "$dir/fuzz/fuzz_hooks_replay" "${args[@]}")
    n=$((nseeds * reps))
    printf '| %s | fuzz_hooks_replay, %d seeds x %d | %s | %s ms/exec |\n' "$label" "$nseeds" "$reps" "$t" \
      "$(awk -v t="$t" -v n="$n" 'BEGIN{printf "%.3f", 1000 * t / n}')"
  fi
  if [ -x "$dir/fuzz/fuzz_hooks_replay" ] && want small; then
    args=()
    for _ in $(seq "$small_reps"); do args+=("$tmp/small"); done
    t=$(cpu "$tmp/out" "$dir/fuzz/fuzz_hooks_replay" "${args[@]}")
    n=$((small * small_reps))
    printf '| %s | fuzz_hooks_replay, small set (%d inputs <= 256 bytes) x %d | %s | %s exec/s |\n' "$label" \
      "$small" "$small_reps" "$t" "$(rate "$t" "$n")"
  fi
  if [ -x "$dir/fuzz/fuzz_hooks" ]; then
    if grep -aq __AFL_SHM_ID "$dir/fuzz/fuzz_hooks"; then
      want small && afl "$label" "$dir/fuzz/fuzz_hooks" "$tmp/small" "the small set"
      want seeds && afl "$label" "$dir/fuzz/fuzz_hooks" "$seeds" "the seeds"
    else
      want seeds && libfuzzer "$label" "$dir/fuzz/fuzz_hooks" "$seeds" "$runs" 16384 "the seeds"
      want small && libfuzzer "$label" "$dir/fuzz/fuzz_hooks" "$tmp/small" "$small_runs" 256 "the small set"
      rm -rf "$tmp/empty" && mkdir "$tmp/empty"
      want small && libfuzzer "$label" "$dir/fuzz/fuzz_hooks" "$tmp/empty" "$small_runs" 256 "an empty corpus"
    fi
  fi
done
