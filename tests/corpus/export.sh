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
