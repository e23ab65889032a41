#!/bin/sh
# cli_hostile.sh ZOFUZZ SRCDIR - zofuzz on hostile command lines and files:
# every mistake is exit 2 with a message naming what was wrong, never a
# silent default, a silently different reading of the input, or a run to
# completion that then fails.  Exits non-zero on the first failure.
set -u
Z="$1"
SRC="$2"
T="${TMPDIR:-/tmp}/zofuzz-hostile.$$"
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
rc() { "$@" >"$T/out" 2>"$T/err"; echo $?; }
# expect exit 2 and a message on stderr containing $1
bad() {
    want="$1"
    shift
    r=$(rc "$@")
    [ "$r" = 2 ] || fail "$* exited $r, expected 2: $(cat "$T/err")"
    grep -qF -- "$want" "$T/err" || fail "$*: stderr lacks '$want': $(cat "$T/err")"
}

R="$SRC/corpus/regressions/module-reuse-albert.scn"

# a file not named .scn is read as text when its content is text: its
# parse error is reported instead of decoding the text as fuzzer bytes
printf 'modul _\n' > "$T/typo.txt"
bad "typo.txt:1:1" "$Z" repro "$T/typo.txt"
bad "pass --bytes" "$Z" trace "$T/typo.txt"
bad "typo.txt:1:1" "$Z" print "$T/typo.txt"
sed 's/numel=4/numel=-1/' "$R" > "$T/neg"
bad "neg:" "$Z" repro "$T/neg"
bad "empty file" "$Z" repro /dev/null
bad "empty file" "$Z" print /dev/null
# asked for, they are bytes
[ "$(rc "$Z" repro "$T/typo.txt" --bytes --quiet)" -le 1 ] || fail "repro --bytes of text: $(cat "$T/err")"
[ "$(rc "$Z" repro /dev/null --bytes --quiet)" -le 1 ] || fail "repro --bytes /dev/null: $(cat "$T/err")"
# text that is a scenario is still detected without the .scn name
cp "$R" "$T/albert.txt"
[ "$(rc "$Z" repro "$T/albert.txt" --quiet)" = 0 ] || fail "repro of a .scn without the name"
grep -q "all invariants hold (policy per-call" "$T/out" || fail "text scenario verdict"

# raw bytes replay under fuzz_hooks' policy (per-call unless ZOFUZZ_POLICY
# says otherwise), not the policy their first byte decodes to
sed 's/^module albert$/config policy=reset-on-forward\nmodule albert/' "$R" > "$T/rof.scn"
[ "$(rc "$Z" compile "$T/rof.scn" -o "$T/rof.bin")" = 0 ] || fail "compile rof: $(cat "$T/err")"
[ "$(rc "$Z" repro "$T/rof.bin" --quiet)" = 0 ] || fail "bytes replayed under their own policy byte"
grep -q "policy per-call" "$T/out" || fail "bytes default policy: $(cat "$T/out")"
[ "$(ZOFUZZ_POLICY=scenario rc "$Z" repro "$T/rof.bin" --quiet)" = 1 ] || fail "ZOFUZZ_POLICY=scenario"
[ "$(ZOFUZZ_POLICY=reset-on-forward rc "$Z" repro "$T/rof.bin" --quiet)" = 1 ] || fail "ZOFUZZ_POLICY=name"
bad "ZOFUZZ_POLICY" env ZOFUZZ_POLICY=bogus "$Z" repro "$T/rof.bin" --quiet
# every setting's environment variable is checked (fuzz/settings.h), not
# only the one the command reads: a typo is never silently ignored
bad "ZOFUZZ_ORDER: order: 'engin' is not one of" env ZOFUZZ_ORDER=engin "$Z" repro "$R" --quiet
bad "ZOFUZZ_TRACE: trace: 'yes' is not one of: 0|1" env ZOFUZZ_TRACE=yes "$Z" print "$R"
bad "ZOFUZZ_CAP: cap: '12x' is not one of" env ZOFUZZ_CAP=12x "$Z" repro "$R" --quiet
# the text keeps its own policy
[ "$(rc "$Z" repro "$T/rof.scn" --quiet)" = 1 ] || fail "text policy"

# unknown or conflicting arguments are errors, never "the last one wins"
bad "--verify: '7' is not one of: 0|1|scenario" "$Z" repro "$R" --verify 7
bad "--text and --bytes contradict" "$Z" repro "$R" --text --bytes
bad "--text and --bytes contradict" "$Z" print "$R" --bytes --text
bad "--target given twice" "$Z" run --target fuzz_api --target fuzz_hooks
bad "--policy given twice" "$Z" repro "$R" --policy per-call --policy lazy-init
bad "unknown target 'nope'" "$Z" run --target nope
[ "$(rc "$Z" repro "$R" --verify 1 --quiet)" = 0 ] || fail "--verify 1: $(cat "$T/err")"
BUILD_SH="$SRC/build.sh"
if [ -x "$BUILD_SH" ] && command -v bash >/dev/null; then
    r=$(cd "$T" && rc "$BUILD_SH" test extra junk)
    [ "$r" != 0 ] || fail "build.sh test extra junk accepted"
    grep -q "takes no arguments (got: extra junk)" "$T/err" || fail "build.sh junk message: $(cat "$T/err")"
    # refused before any build: smoke's seconds and extra words, CI steps, the
    # GPU script's arguments, and an oracle VENV_DIR that is not a venv
    for a in "0" "010" "-5" "99999999999999999999"; do
        r=$(cd "$T" && rc "$BUILD_SH" smoke "$a")
        [ "$r" != 0 ] && grep -q "smoke: seconds must be a number in 1..9999999, got '$a'" "$T/err" ||
            fail "build.sh smoke $a: exit $r: $(cat "$T/err")"
    done
    r=$(cd "$T" && rc "$BUILD_SH" smoke 1 extra)
    [ "$r" != 0 ] && grep -q "smoke takes one argument" "$T/err" || fail "build.sh smoke 1 extra: $(cat "$T/err")"
    r=$(ZO_CI_STEPS="smoke bogus" rc "$SRC/.ci/run")
    [ "$r" = 2 ] && grep -q "unknown step 'bogus'" "$T/err" || fail ".ci/run bogus step: exit $r: $(cat "$T/err")"
    r=$(rc "$SRC/bench/run.sh" --only hooks --only gather --no-build)
    [ "$r" = 2 ] && grep -q "bench/run.sh: --only given twice" "$T/err" || fail "bench --only twice: exit $r: $(cat "$T/err")"
    r=$(rc "$SRC/tests/gpu/run.sh" --no-buld)
    [ "$r" = 2 ] && grep -q "usage: tests/gpu/run.sh" "$T/err" || fail "gpu --no-buld: exit $r: $(cat "$T/err")"
    mkdir -p "$T/notvenv"
    echo keep >"$T/notvenv/a.md"
    r=$(rc "$SRC/tools/oracle_venv.sh" "$T/notvenv")
    [ "$r" = 2 ] && [ -f "$T/notvenv/a.md" ] && grep -q "is not a Python venv" "$T/err" ||
        fail "oracle_venv.sh on a folder that is not a venv: exit $r: $(cat "$T/err")"
fi
# numbers are decimal digits: no sign or space (' -5' wrapped to 2^64 - 5),
# no 0x, no octal reading of a leading 0
bad "--trials: bad number ' -5'" "$Z" check --trials " -5"
bad "--trials: bad number '0x2'" "$Z" check --trials 0x2
bad "ZOFUZZ_CAP: cap: '0x40'" env ZOFUZZ_CAP=0x40 "$Z" repro "$R" --quiet

# enumerate's argument errors say what was wrong, not only the usage text
if "$Z" enumerate --help >/dev/null 2>&1; then
    bad "--jobs '0' is not in 1..256" "$Z" enumerate --jobs 0
    bad "--jobs '100000' is not in 1..256" "$Z" enumerate --jobs 100000
    bad "--shard '3/2': i must be in 0..n-1" "$Z" enumerate --shard 3/2
    bad "--shard '0/0': n must be in 1..100000" "$Z" enumerate --shard 0/0
    bad "--max-runs '0' is not in 1..1000000" "$Z" enumerate --max-runs 0
    bad "bad --features 'bogus'" "$Z" enumerate --features bogus
    bad "--max-modules '9' is not in 1..6" "$Z" enumerate --max-modules 9
    bad "--max-calls '17' is not in 1..16" "$Z" enumerate --max-calls 17
    # an output path that cannot be written fails before the run
    bad "--out /proc/nope/x: directory /proc/nope does not exist" "$Z" enumerate --out /proc/nope/x
    if grep -q "^usage:" "$T/err"; then fail "enumerate error printed the whole usage"; fi
fi
bad "-o /proc/nope/x.scn: directory /proc/nope does not exist" "$Z" minimize "$R" --policy reset-on-forward -o /proc/nope/x.scn
bad "minimize: --max-runs must be at least 1" "$Z" minimize "$R" --max-runs 0
bad "is a directory" "$Z" repro "$T"
# an output that is not a regular file is written into, never replaced:
# a device that refuses the bytes is a write error (exit 2), a link stays
# a link and its target gets the script (through links here, so that a
# regression replaces a link in $T, not /dev/full itself)
ln -s /dev/full "$T/full.py"
bad "write error" "$Z" export "$R" --to torch -o "$T/full.py"
[ -L "$T/full.py" ] || fail "export -o replaced a link to /dev/full"
ln -s /dev/null "$T/null.py"
[ "$(rc "$Z" export "$R" --to deepspeed -o "$T/null.py")" = 0 ] || fail "export -o a link to /dev/null: $(cat "$T/err")"
[ -L "$T/null.py" ] || fail "export -o replaced a link to /dev/null"
: >"$T/real.py"
ln -s real.py "$T/link.py"
[ "$(rc "$Z" export "$R" --to torch -o "$T/link.py")" = 0 ] || fail "export -o a link: $(cat "$T/err")"
[ -L "$T/link.py" ] && grep -q "def build_model" "$T/real.py" || fail "export -o a link: the link or its target"
# .scn text: a second expect line is named as such; a byte order mark is
# skipped; tokens may be separated by tabs (docs/scenario-format.md)
printf 'expect per-call=ok\nexpect per-call=ok\nmodule a\nstep train loss=0\n  call a(batch_rg) -> 1 use(arg0)\n' > "$T/e2.scn"
bad "only one 'expect' line" "$Z" repro "$T/e2.scn"
if grep -q "root module" "$T/err"; then fail "second expect blamed on modules: $(cat "$T/err")"; fi
printf '\357\273\277module a\nstep train loss=0\n  call a(batch_rg) -> 1 use(arg0)\n' > "$T/bom.scn"
[ "$(rc "$Z" repro "$T/bom.scn" --quiet)" = 0 ] || fail "BOM: $(cat "$T/err")"
cp "$T/bom.scn" "$T/bom.txt"
[ "$(rc "$Z" repro "$T/bom.txt" --quiet)" = 0 ] || fail "BOM without the .scn name: $(cat "$T/err")"
printf 'module\ta\nstep train\tloss=0\n  call a(batch_rg)\t-> 1 use(arg0)\n' > "$T/tab.scn"
[ "$(rc "$Z" repro "$T/tab.scn" --quiet)" = 0 ] || fail "tab between tokens: $(cat "$T/err")"
grep -q "separated by spaces or tabs" "$SRC/docs/scenario-format.md" || fail "spec and parser disagree on tabs"

# a value that would make a command do nothing, or an option the command
# would not read, is refused before any work
M="$SRC/corpus/models/mixtral_moe_ranks.scn"
mkdir -p "$T/tr"
bad "--rank 7: the scenario has world size 4" "$Z" traces "$T/tr" "$M" --rank 7
bad "--rank 1: not an all-ranks scenario" "$Z" traces "$T/tr" "$R" --rank 1
bad "--seeds 5 1: FIRST is after LAST" "$Z" traces "$T/tr" --seeds 5 1
bad "check: --trials must be at least 1" "$Z" check --trials 0
bad "check: -o $SRC/README.md: cannot create or write it (Not a directory)" "$Z" check --trials 1 -o "$SRC/README.md"
bad "'route,' has an empty item" "$Z" check --trials 1 --edits route,
bad "',' has an empty item" "$Z" check --trials 1 --edits ,
bad "'' has an empty item" "$Z" minimize "$R" --policy reset-on-forward --edits ""
bad "names route twice" "$Z" check --trials 1 --edits route,skip,route
bad "ZOFUZZ_EDITS: edits: 'route,,skip' has an empty item" env ZOFUZZ_EDITS=route,,skip "$Z" check --trials 1
bad "run: --progress must be at least 1" "$Z" run --time 1 --progress 0
bad "--only-i8: $R is not an all-ranks scenario" "$Z" repro "$R" --only-i8
tr '\n' '\r' <"$R" >"$T/cr.scn"
bad "its lines end in CR alone" "$Z" repro "$T/cr.scn"
bad "seeds: -o $SRC/README.md: cannot create or write it (Not a directory)" "$Z" seeds -o "$SRC/README.md" "$R"
if "$Z" enumerate --help >/dev/null 2>&1; then
    bad "--ranks does not take --count" "$Z" enumerate --ranks --count
    bad "--ranks does not take --orders" "$Z" enumerate --ranks --orders all
    bad "--gather-always needs --ranks" "$Z" enumerate --gather-always --count
    bad "--verify needs --ranks" "$Z" enumerate --verify --count
    bad "bad --features ''" "$Z" enumerate --features "" --count
fi

# enumerate --count says about how many scenarios there are before counting
if "$Z" enumerate --help >/dev/null 2>&1; then
    [ "$(rc "$Z" enumerate --count --max-modules 1 --max-calls 1 --max-steps 1)" = 0 ] || fail "enumerate --count"
    [ "$(cat "$T/out")" = 180 ] || fail "enumerate --count output: $(cat "$T/out")"
    grep -q "about .* scenarios in the bound (estimate" "$T/err" || fail "enumerate --count estimate: $(cat "$T/err")"
fi

echo "cli_hostile: ok"
