#!/bin/bash
# harness_speed.sh - CPU time of the fuzz harness, side by side for several
# builds (bench/results/harness.md has the figures and how they were made).
#
#   bench/harness_speed.sh [--flat "B L ..."] [--reps K] [--runs N] LABEL=BUILD_DIR ...
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
# CPU time is user + sys of /usr/bin/time (other jobs on the machine change
# wall time, not this).  Run from the repository root.
set -euo pipefail
flat="90 90,180 180"
reps=20
runs=20000
while [ $# -gt 0 ]; do
  case "$1" in
    --flat) flat="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--flat \"B L,...\"] [--reps K] [--runs N] LABEL=BUILD_DIR ..." >&2; exit 2; }
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
for s in "${shapes[@]}"; do
  set -- $s
  python3 bench/gen_flat_scn.py "$1" "$2" -o "$tmp/flat_$1x$2.scn"
done

printf '| build | measurement | CPU s | per unit |\n|---|---|---|---|\n'
for arg in "${builds[@]}"; do
  label=${arg%%=*}
  dir=${arg#*=}
  if [ -x "$dir/fuzz/zofuzz" ]; then
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
  if [ -x "$dir/fuzz/fuzz_hooks_replay" ]; then
    args=()
    for _ in $(seq "$reps"); do args+=("$seeds"); done
    t=$(cpu "$tmp/out" "$dir/fuzz/fuzz_hooks_replay" "${args[@]}")
    n=$((nseeds * reps))
    printf '| %s | fuzz_hooks_replay, %d seeds x %d | %s | %s ms/exec |\n' "$label" "$nseeds" "$reps" "$t" \
      "$(awk -v t="$t" -v n="$n" 'BEGIN{printf "%.3f", 1000 * t / n}')"
  fi
  if [ -x "$dir/fuzz/fuzz_hooks" ]; then
    rm -rf "$tmp/corpus" && cp -r "$seeds" "$tmp/corpus"
    t=$(cpu "$tmp/out" "$dir/fuzz/fuzz_hooks" -runs="$runs" -seed=1 -max_len=16384 \
        -dict=fuzz/fuzz_hooks.dict -print_final_stats=1 "$tmp/corpus")
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/out")
    n=${n:-0}
    printf '| %s | fuzz_hooks -runs=%d -seed=1 on the seeds (%s executions) | %s | %s exec/s |\n' \
      "$label" "$runs" "$n" "$t" "$(awk -v t="$t" -v n="$n" 'BEGIN{printf "%.0f", (t > 0 ? n / t : 0)}')"
  fi
done
