#!/bin/sh
# seeds_current.sh ZOFUZZ SRCDIR - the committed corpus/seeds/<target>/
# files compiled from corpus/models and corpus/regressions are up to date
# (same bytes as `zofuzz seeds` gives now, none missing, none stale).
# Fix: cmake --build <build dir> --target corpus_seeds, then commit
# corpus/seeds.
set -u
Z="$1"
SRC="$2"
T="${TMPDIR:-/tmp}/zofuzz-seeds.$$"
trap 'rm -rf "$T"' EXIT
"$Z" seeds -o "$T" >/dev/null || { echo "zofuzz seeds failed"; exit 1; }
bad=0
for t in fuzz_hooks fuzz_scn_parse; do
    for f in "$T/$t"/*; do
        b=$(basename "$f")
        if ! cmp -s "$f" "$SRC/corpus/seeds/$t/$b"; then
            echo "stale or missing: corpus/seeds/$t/$b"
            bad=1
        fi
    done
    for f in "$SRC/corpus/seeds/$t"/models-* "$SRC/corpus/seeds/$t"/regressions-*; do
        [ -e "$f" ] || continue
        b=$(basename "$f")
        [ -e "$T/$t/$b" ] || { echo "no longer produced: corpus/seeds/$t/$b"; bad=1; }
    done
done
if [ $bad = 1 ]; then
    echo "corpus/seeds is out of date: cmake --build <build dir> --target corpus_seeds, then commit corpus/seeds"
    exit 1
fi
echo "corpus/seeds up to date"
