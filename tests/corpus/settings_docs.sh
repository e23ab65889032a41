#!/bin/sh
# settings_docs.sh ZOFUZZ DOC - DOC carries the current settings table:
# the lines between its "zofuzz settings --markdown" markers are exactly
# what `zofuzz settings --markdown` prints (fuzz/settings.h is the source).
set -eu
Z="$1"
DOC="$2"
want=$("$Z" settings --markdown)
have=$(awk '/^<!-- end of zofuzz settings --markdown -->$/{p=0} p{print} /^<!-- zofuzz settings --markdown -->$/{p=1}' "$DOC")
if [ -z "$have" ]; then
    echo "settings_docs: no table between the markers in $DOC" >&2
    exit 1
fi
if [ "$want" != "$have" ]; then
    echo "settings_docs: $DOC's settings table differs from zofuzz settings --markdown; regenerate it:" >&2
    printf '%s\n' "$want" >&2
    exit 1
fi
echo "settings_docs: $DOC carries the current table ($(printf '%s\n' "$want" | wc -l) lines)"
