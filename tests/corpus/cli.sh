#!/bin/sh
# cli.sh ZOFUZZ SRCDIR - zofuzz's command line: --help and exit codes of
# every subcommand, text <-> bytes round trips, raw-bytes detection,
# minimize/verify exit codes.  Exits non-zero on the first failure.
set -u
Z="$1"
SRC="$2"
T="${TMPDIR:-/tmp}/zofuzz-cli.$$"
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
rc() { "$@" >"$T/out" 2>"$T/err"; echo $?; }

# help: exit 0 and a usage line, for the tool and every subcommand
[ "$(rc "$Z" --help)" = 0 ] || fail "zofuzz --help"
for c in run repro minimize check print compile trace verify seeds export; do
    [ "$(rc "$Z" $c --help)" = 0 ] || fail "$c --help exit"
    grep -q "^usage: zofuzz $c" "$T/out" || fail "$c --help text"
    grep -q "^Exit" "$T/out" || fail "$c --help lacks exit codes"
done
# bad usage: exit 2
[ "$(rc "$Z")" = 2 ] || fail "no command"
[ "$(rc "$Z" frobnicate)" = 2 ] || fail "unknown command"
[ "$(rc "$Z" repro)" = 2 ] || fail "repro without FILE"
[ "$(rc "$Z" repro /nonexistent/x.scn)" = 2 ] || fail "repro missing file"
[ "$(rc "$Z" check --trials x)" = 2 ] || fail "check bad number"
[ "$(rc "$Z" check --policy nope)" = 2 ] || fail "check bad policy"
[ "$(rc "$Z" run --jobs 0)" = 2 ] || fail "run --jobs 0"
printf 'module a\nstep train loss=0\n  call a(batch_rg) -> 1 use(arg2)\n' > "$T/bad.scn"
[ "$(rc "$Z" repro "$T/bad.scn")" = 2 ] || fail "unparsable .scn"
grep -q "bad.scn:3:29: use(): arg2" "$T/err" || fail "parse error position: $(cat "$T/err")"

# text -> bytes -> text (names are not in the bytes)
R="$SRC/corpus/regressions/module-reuse-albert.scn"
[ "$(rc "$Z" compile "$R" -o "$T/a.bin")" = 0 ] || fail "compile"
[ "$(rc "$Z" print "$T/a.bin" -o "$T/a.scn")" = 0 ] || fail "print bytes"
[ "$(rc "$Z" compile "$T/a.scn" -o "$T/b.bin")" = 0 ] || fail "compile printed"
cmp -s "$T/a.bin" "$T/b.bin" || fail "bytes -> text -> bytes differs"
# raw bytes are detected, and give the same verdicts as the text
[ "$(rc "$Z" repro "$T/a.bin" --policy reset-on-forward --quiet)" = 1 ] || fail "repro bytes I1"
grep -q "^violated: invariant I1" "$T/out" || fail "repro bytes verdict"
[ "$(rc "$Z" repro "$T/a.bin" --quiet)" = 0 ] || fail "repro bytes per-call"
grep -q "all invariants hold" "$T/out" || fail "repro holds text"
# trace: canonical lines, verdict on stderr
[ "$(rc "$Z" trace "$R" --policy reset-on-forward --order engine)" = 1 ] || fail "trace exit"
grep -q "^POST m=1 c=0->-1$" "$T/out" || fail "trace lacks the -1"
grep -q "^violated" "$T/err" || fail "trace verdict on stderr"
# minimize: 0 when it minimises, 1 when the scenario holds
[ "$(rc "$Z" minimize "$R" --policy reset-on-forward -o "$T/m.scn")" = 0 ] || fail "minimize"
grep -q "DeepSpeed reproducer: $T/m.py" "$T/err" || fail "minimize does not name its reproducer"
grep -q "^after : 1 step, 1 pass, 3 calls, 2 modules" "$T/err" || fail "minimize sizes: $(cat "$T/err")"
[ "$(rc "$Z" verify "$T/m.scn")" = 0 ] || fail "minimised file does not verify"
[ -s "$T/m.py" ] || fail "minimize did not write the DeepSpeed reproducer beside m.scn"
grep -q "^Source: .*m.scn" "$T/m.py" || fail "minimize's reproducer names its .scn"
[ "$(rc "$Z" minimize "$R")" = 1 ] || fail "minimize of a holding scenario"
# all ranks: repro runs every rank in the host world and names
# both ranks' first differing collective with their hook stacks
M="$SRC/corpus/models/mixtral_moe_ranks.scn"
if [ -f "$M" ]; then
    [ "$(rc "$Z" repro "$M" --quiet)" = 1 ] || fail "repro all-ranks exit"
    grep -q "^violated: invariant I8 violated" "$T/out" || fail "repro all-ranks verdict: $(head -3 "$T/out")"
    [ "$(grep -c '^    hook stack: step 0 (train) pass 0 forward: lm(m0)#0 > ' "$T/out")" -ge 2 ] ||
        fail "repro all-ranks: both ranks' hook stacks"
    cp "$T/out" "$T/r1"
    "$Z" repro "$M" --quiet > "$T/r2" 2>&1
    cmp -s "$T/r1" "$T/r2" || fail "repro all-ranks is not deterministic"
    [ "$(rc "$Z" repro "$M" --quiet --verify 1)" = 1 ] || fail "repro --verify 1 exit"
    grep -q "ZO_ERR_COLLECTIVE_MISMATCH" "$T/out" || fail "verify_collectives: no mismatch reported"
    [ "$(rc "$Z" repro "$M" --quiet --only-i8 --policy lazy-init)" = 1 ] || fail "repro --only-i8"
    grep -q "^violated: invariant I8" "$T/out" || fail "repro --only-i8 verdict"
    [ "$(rc "$Z" trace "$M")" = 1 ] || fail "trace all-ranks exit"
    grep -q "^# rank 3$" "$T/out" || fail "trace all-ranks: per-rank sections"
    [ "$(rc "$Z" repro "$SRC/corpus/models/mixtral_moe_ranks_gather.scn" --quiet)" = 0 ] ||
        fail "gather-always Mixtral: $(cat "$T/out")"
    grep -q "all invariants hold, I8 included (W=4" "$T/out" || fail "gather-always verdict text"
fi
[ "$(rc "$Z" check --invariants nope)" = 2 ] || fail "check --invariants nope"
[ "$(rc "$Z" check --edits sideways)" = 2 ] || fail "check --edits sideways"
[ "$(rc "$Z" minimize "$R" --gather-always everything)" = 2 ] || fail "minimize --gather-always bad"
# check and minimize take the all-ranks knobs from the environment too;
# an option overrides its variable (seed 1's first 300 trials hold 4 I8
# failures, nothing else)
ck() { "$Z" check --trials 300 --seed 1 --quiet --no-minimize "$@"; }
[ "$(rc ck)" = 1 ] && grep -q "4 failures (I8 x4)" "$T/out" || fail "check default: $(tail -1 "$T/out")"
[ "$(ZOFUZZ_INVARIANTS=no-I8 rc ck)" = 0 ] || fail "check ZOFUZZ_INVARIANTS=no-I8: $(tail -1 "$T/out")"
[ "$(ZOFUZZ_EDITS=skip rc ck)" = 0 ] || fail "check ZOFUZZ_EDITS=skip: $(tail -1 "$T/out")"
[ "$(ZOFUZZ_INVARIANTS=no-I8 rc ck --invariants programs)" = 1 ] || fail "check: --invariants overrides"
[ "$(ZOFUZZ_INVARIANTS=bogus rc ck)" = 2 ] || fail "check ZOFUZZ_INVARIANTS=bogus"
grep -q "ZOFUZZ_INVARIANTS" "$T/err" || fail "check ZOFUZZ_INVARIANTS=bogus message"

# export: usage errors exit 2 with a message naming the problem and write nothing
"$Z" --help > "$T/out"; grep -q "^  export " "$T/out" || fail "zofuzz --help does not list export"
noout() { [ ! -e "$T/x.py" ] || fail "export left $T/x.py after: $*"; }
[ "$(rc "$Z" export "$R" --to deepspeed -o "$T/x.py")" = 0 ] || fail "export: $(cat "$T/err")"
grep -q "^Source: .*module-reuse-albert.scn" "$T/x.py" || fail "export header: source"
grep -q "^Simulator: .*reset-on-forward" "$T/x.py" && grep -q "invariant I1 violated" "$T/x.py" ||
    fail "export header: simulator verdict"
rm -f "$T/x.py"
[ "$(rc "$Z" export /nonexistent/x.scn --to torch -o "$T/x.py")" = 2 ] || fail "export missing file"
grep -q "/nonexistent/x.scn" "$T/err" || fail "export missing file message"; noout missing
[ "$(rc "$Z" export "$T/bad.scn" --to torch -o "$T/x.py")" = 2 ] || fail "export unparsable"
grep -q "bad.scn:3:29" "$T/err" || fail "export unparsable message"; noout unparsable
[ "$(rc "$Z" export "$R" --to jax -o "$T/x.py")" = 2 ] || fail "export --to jax"
grep -q "unknown target 'jax'" "$T/err" || fail "export --to message"; noout target
[ "$(rc "$Z" export "$R" -o "$T/x.py")" = 2 ] || fail "export without --to"; noout no-to
[ "$(rc "$Z" export "$R" --to torch --to deepspeed -o "$T/x.py")" = 2 ] || fail "export --to twice"
grep -q -- "--to given twice" "$T/err" || fail "export repeated flag message"; noout twice
[ "$(rc "$Z" export "$R" --to torch --frob -o "$T/x.py")" = 2 ] || fail "export unknown flag"
grep -q -- "unknown option --frob" "$T/err" || fail "export unknown flag message"; noout frob
[ "$(rc "$Z" export "$R" --to torch -o "$T/nodir/x.py")" = 2 ] || fail "export unwritable -o"
grep -q "cannot write -o $T/nodir/x.py: directory $T/nodir does not exist" "$T/err" ||
    fail "export unwritable message: $(cat "$T/err")"
[ "$(rc "$Z" export "$R" --to torch -o "$T")" = 2 ] || fail "export -o DIR"
if [ -f "$M" ]; then
    [ "$(rc "$Z" export "$M" --to deepspeed -o "$T/x.py")" = 2 ] || fail "export all-ranks without --rank"
    grep -q "rank edits.*--rank R" "$T/err" || fail "export all-ranks message"; noout all-ranks
    [ "$(rc "$Z" export "$M" --to deepspeed --rank 9 -o "$T/x.py")" = 2 ] || fail "export --rank 9"; noout rank9
    [ "$(rc "$Z" export "$M" --to deepspeed --rank 1 -o "$T/x.py")" = 0 ] || fail "export --rank 1"
    grep -q "^- the program of rank 1 of an all-ranks scenario" "$T/x.py" || fail "export rank note"
    rm -f "$T/x.py"
fi

# verify: a wrong expect line is a mismatch (1)
sed 's/reset-on-forward=I1/reset-on-forward=ok/' "$R" > "$T/wrong.scn"
[ "$(rc "$Z" verify "$T/wrong.scn")" = 1 ] || fail "verify mismatch"
# seeds: compiles into the given directory
[ "$(rc "$Z" seeds -o "$T/seeds" "$R")" = 0 ] || fail "seeds"
[ -s "$T/seeds/fuzz_hooks/regressions-module-reuse-albert.bin" ] || fail "seed bin"
[ -s "$T/seeds/fuzz_scn_parse/regressions-module-reuse-albert.scn" ] || fail "seed scn"
# check: deterministic per seed
"$Z" check --seed 5 --trials 30 --policy reset-on-forward --max-failures 2 > "$T/c1" 2>&1
"$Z" check --seed 5 --trials 30 --policy reset-on-forward --max-failures 2 > "$T/c2" 2>&1
sed 's/; [0-9.]* s (.*$//' "$T/c1" > "$T/c1s"; sed 's/; [0-9.]* s (.*$//' "$T/c2" > "$T/c2s"
cmp -s "$T/c1s" "$T/c2s" || fail "check is not deterministic"
echo "cli.sh: all checks passed"
