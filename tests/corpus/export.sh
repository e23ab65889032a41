#!/bin/sh
# export.sh ZOFUZZ SRCDIR - `zofuzz export` of every .scn under corpus/ to
# both targets, each script checked with python3 -m py_compile.  All-ranks
# scenarios with rank edits are exported per rank (--rank 0 and the last).
set -u
Z="$1"
SRC="$2"
T="${TMPDIR:-/tmp}/zofuzz-export.$$"
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
PY=$(command -v python3) || { echo "python3 not found"; exit 1; }
n=0
bad=0
for f in $(find "$SRC/corpus" -name '*.scn' | sort); do
    b=$(echo "${f#$SRC/corpus/}" | tr '/' '-')
    b=${b%.scn}
    ranks=none
    if grep -q '^rank [0-9]' "$f"; then
        w=$(sed -n 's/^config.*world_size=\([0-9]*\).*/\1/p' "$f" | head -1)
        ranks="0 $(( ${w:-1} - 1 ))"
    fi
    for to in torch deepspeed; do
        for r in $ranks; do
            if [ "$r" = none ]; then out="$T/$b.$to.py"; set -- ; else out="$T/$b.$to.r$r.py"; set -- --rank "$r"; fi
            if ! "$Z" export "$f" --to "$to" -o "$out" "$@" 2>"$T/err"; then
                echo "FAIL: zofuzz export $f --to $to $*: $(cat "$T/err")"
                bad=1
                continue
            fi
            n=$((n + 1))
        done
    done
done
[ $n -gt 0 ] || { echo "FAIL: no .scn files under $SRC/corpus"; exit 1; }
# scenarios the corpus lacks: a tree whose attribute chains pass the
# script's limit (20 levels of 23-character names: past module 17 the
# chain goes through a local), and names that are no Python identifier
# next to siblings named like their fallback (a module "class" beside
# "m2", a parameter "class" beside "p1")
{
    i=0
    while [ $i -lt 20 ]; do
        printf '%*smodule m%02d_xxxxxxxxxxxxxxxxxxx\n' $((2 * i)) '' $i
        i=$((i + 1))
    done
    echo 'param p owner=@19 numel=4'
    echo 'step train loss=0'
    i=0
    while [ $i -lt 20 ]; do
        src=arg0
        [ $i = 0 ] && src=batch
        printf '%*scall @%d(%s) -> 1 use(arg0)\n' $((2 * i + 2)) '' $i $src
        i=$((i + 1))
    done
} >"$T/x-deep.scn"
printf 'module root\n  module m2\n  module class\nparam w owner=m2 numel=4\nparam v owner=class numel=4\nstep train loss=0\n  call root(batch_rg) -> 1 use(out1.0)\n    call m2(arg0) -> 1 use(arg0)\n    call class(out0.0) -> 1 use(arg0)\n' >"$T/x-mods.scn"
printf 'module root\nparam p1 owner=root numel=4\nparam class owner=root numel=8\nstep train loss=0\n  call root(batch_rg) -> 1 use(arg0)\n' >"$T/x-params.scn"
for f in "$T"/x-*.scn; do
    for to in torch deepspeed; do
        if ! "$Z" export "$f" --to "$to" -o "${f%.scn}.$to.py" 2>"$T/err"; then
            echo "FAIL: zofuzz export $f --to $to: $(cat "$T/err")"
            bad=1
        fi
    done
done
grep -q '^    _m17 = Block(' "$T/x-deep.torch.py" || { echo "FAIL: the deep tree's module 17 is not bound to a local"; bad=1; }
# every module and parameter is its own attribute: no two assignments of
# build_model have the same left-hand side
for f in "$T"/*.py; do
    d=$(sed -n 's/^    \([A-Za-z_][A-Za-z0-9_.]*\) = \(Block\|torch\.nn\.Parameter\)(.*/\1/p' "$f" | sort | uniq -d)
    [ -z "$d" ] || { echo "FAIL: $f assigns $d twice"; bad=1; }
done
# every script through py_compile in one interpreter (one start per script
# was most of this test's time); each failure names its script
if ! "$PY" - "$T"/*.py <<'PY'
import py_compile, sys
bad = 0
for f in sys.argv[1:]:
    try:
        py_compile.compile(f, cfile=f + "c", doraise=True)
    except py_compile.PyCompileError as e:
        print("FAIL: py_compile of %s: %s" % (f, e.msg))
        bad = 1
sys.exit(bad)
PY
then
    bad=1
fi
# the torch script imports no deepspeed; neither imports zoffload
if grep -l -E '^(import|from) (deepspeed|zoffload)' "$T"/*.torch*.py | head -1 | grep -q .; then
    echo "FAIL: a torch export imports deepspeed or zoffload"; bad=1
fi
if grep -l -E '^\s*(import|from) zoffload' "$T"/*.py | head -1 | grep -q .; then
    echo "FAIL: an export imports zoffload"; bad=1
fi
[ $bad = 0 ] || exit 1
echo "export.sh: $n scripts exported and compiled"
