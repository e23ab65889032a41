#!/usr/bin/env bash
# readme_example.sh - "the README example compiles as shown".
#
# usage: readme_example.sh README.md OUTDIR CC -- COMPILE-AND-LINK-ARGS...
#
# Extracts the first ```c fenced block of README.md verbatim, compiles it
# with CC and the given arguments (registered by the root CMakeLists.txt:
# -std=c11 -Wall -Wextra -Werror, the build's flags, -Iinclude and the static
# libzoffload), runs it and fails if any step fails or the block is missing.
set -euo pipefail

if (($# < 4)) || [[ "$4" != "--" ]]; then
    echo "usage: $0 README.md OUTDIR CC -- ARGS..." >&2
    exit 2
fi
readme="$1" outdir="$2" cc="$3"
shift 4

mkdir -p "$outdir"
src="$outdir/readme_example.c"
exe="$outdir/readme_example"
rm -f "$src" "$exe"

awk '
    !inblock && /^```c[[:space:]]*$/ { inblock = 1; found = 1; next }
    inblock && /^```[[:space:]]*$/   { exit }
    inblock                          { print }
    END                              { if (!found) exit 3 }
' "$readme" >"$src" || { echo "readme_example: no \`\`\`c block in $readme" >&2; exit 1; }

lines=$(grep -c . "$src" || true)
if ((lines == 0)); then
    echo "readme_example: the first \`\`\`c block of $readme is empty" >&2
    exit 1
fi
grep -q 'int main' "$src" || { echo "readme_example: the block has no main()" >&2; exit 1; }

echo "readme_example: $lines non-empty lines extracted from $readme"
echo "+ $cc $src $* -o $exe"
"$cc" "$src" "$@" -o "$exe"
echo "+ $exe"
"$exe"
echo "readme_example: compiled and ran cleanly"
