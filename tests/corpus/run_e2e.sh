#!/bin/sh
# run_e2e.sh ZOFUZZ - the main job end to end with the libFuzzer engine
# (registered only when ZO_FUZZ_ENGINE builds fuzz_hooks):
#   1. under reset-on-forward from an empty corpus libFuzzer finds a
#      violation (exit 1), zofuzz replays it, minimises it to a few lines,
#      and the saved .scn verifies as a regression file (zofuzz verify);
#      the DeepSpeed reproducer (zofuzz export) is saved beside it;
#   2. under per-call on the shipped corpus a short run prints progress and
#      a summary and finds nothing (exit 0).
set -u
Z="$1"
T="${TMPDIR:-/tmp}/zofuzz-e2e.$$"
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; cat "$T/out" 2>/dev/null | tail -40; exit 1; }

"$Z" run --policy reset-on-forward --no-seeds --time 60 --work "$T/w1" --engine-arg -seed=1 >"$T/out" 2>&1
rc=$?
[ $rc = 1 ] || fail "legacy run exit $rc (want 1)"
grep -q "^\[zofuzz\] summary" "$T/out" || fail "no summary"
grep -q "violations   [1-9]" "$T/out" || fail "no violation counted"
f=$(find "$T/w1" -name 'crash-*.scn' | head -n 1)
[ -n "$f" ] || fail "no minimised .scn saved"
n=$(grep -v '^#' "$f" | grep -c .)
echo "minimised crash: $n lines (expect line included)"
cat "$f"
# "a few lines": with -seed=1 the crash found depends on the codec (the many-rank
# tail changed it); the minimised forms seen are 7-10 lines, expect line included
[ "$n" -le 12 ] || fail "minimised scenario has $n lines"
# ... with the DeepSpeed reproducer beside it (zofuzz export), named in the output
py="${f%.scn}.py"
[ -s "$py" ] || fail "no DeepSpeed reproducer $py beside the minimised crash"
grep -q "DeepSpeed reproducer: $py" "$T/out" || fail "the run does not name $py"
if command -v python3 >/dev/null; then python3 -m py_compile "$py" || fail "$py does not compile"; fi
cp "$f" "$T/regression.scn"
"$Z" verify "$T/regression.scn" >"$T/out" 2>&1 || fail "the minimised crash does not verify as a regression file"

# deterministic: fixed engine seed and number of runs.  The shipped corpus
# has all-ranks Mixtral seeds whose routing diverges by design:
# the main job's default (ZOFUZZ_INVARIANTS=all) blames I8 on the runtime
# only where the programs do not explain it, so it counts that divergence
# and checks every other invariant on every rank; the programs' I8 itself
# is run_e2e part 3.
# bounded by time, not by a number of runs: a run of N executions can end
# before its first progress line on a fast machine
"$Z" run --time 3 --progress 1 --work "$T/w2" --engine-arg -seed=1 >"$T/out" 2>&1
rc=$?
[ $rc = 0 ] || fail "per-call run exit $rc (want 0)"
grep -q "^\[zofuzz\] *[0-9]*s  execs [0-9]* ([0-9]*/s)  cov [0-9]*  ft [0-9]*  corpus [0-9]*  violations 0" "$T/out" || fail "no progress line"
grep -q "^\[zofuzz\] summary" "$T/out" || fail "no summary"
grep -q "shipped seed" "$T/out" || fail "no shipped corpus"

# 3. all ranks, ZOFUZZ_INVARIANTS=programs (any divergence is I8): the
# shipped per-rank Mixtral seed is an I8 finding, which run replays in the
# world, minimises and prints with both hook stacks
ZOFUZZ_INVARIANTS=programs "$Z" run --time 60 --work "$T/w3" --engine-arg -seed=1 --engine-arg -runs=200 >"$T/out" 2>&1
rc=$?
[ $rc = 1 ] || fail "all-ranks run exit $rc (want 1: the routing divergence)"
grep -q "invariant I8 violated" "$T/out" || fail "no I8 found from the shipped corpus"
f=$(find "$T/w3" -name 'crash-*.scn' | head -n 1)
[ -n "$f" ] || fail "no minimised all-ranks .scn saved"
grep -q "^rank [0-9]* step " "$f" || fail "minimised I8 lost its rank edit"
"$Z" verify "$f" >"$T/out" 2>&1 || fail "the minimised I8 does not verify"
echo "run_e2e: ok"
