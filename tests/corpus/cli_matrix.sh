#!/bin/bash
# cli_matrix.sh ZOFUZZ SRCDIR - generated hostile command lines for every
# zofuzz subcommand.  The subcommands and their options are read from
# zofuzz's own help (`zofuzz help` lists the subcommands, `zofuzz CMD
# --help` starts with the usage synopsis), so a new subcommand or option is
# covered without editing this file.  For every option of every subcommand:
#   missing    the option last, without its value        -> exit 2
#   repeated   the option twice (unless the usage says ...) -> exit 2
#   malformed  a value of the wrong shape (numbers, choices) -> exit 2
#   range      -1 and 2^70 for numbers                     -> exit 2
#   unwritable an output path under /proc/nope             -> exit 2
# and every subcommand that reads files on an empty file, a directory, a
# missing file, and a binary file (rejected where only text is accepted;
# decoded as fuzzer bytes - exit 0 or 1 - where the help says bytes are
# accepted).  Every case runs under `timeout`; the message on stderr must
# name the option, the value or the file.  Exits 1 if any case fails and
# prints a count of cases.
set -u
Z="$1"
SRC="$2"
T="${TMPDIR:-/tmp}/zofuzz-matrix.$$"
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
R="$SRC/corpus/regressions/module-reuse-albert.scn"
TO=20
fails=0 cases=0
say() { printf '%s\n' "$*"; }
bad() { say "FAIL: $*" >&2; fails=$((fails + 1)); }

# run CMD... ; sets RC (124 = timed out)
run() { timeout -k 2 "$TO" "$@" >"$T/out" 2>"$T/err" </dev/null; RC=$?; }

# expect exit 2 and a stderr line naming one of the needles (| separated)
expect2() {
    local label="$1" needles="$2"
    shift 2
    cases=$((cases + 1))
    run "$@"
    if [ "$RC" != 2 ]; then
        bad "$label: exit $RC, expected 2: $* :: $(head -c 300 "$T/err")"
        return
    fi
    local IFS='|' n
    for n in $needles; do
        grep -qF -- "$n" "$T/err" && return
    done
    bad "$label: stderr names none of '$needles': $* :: $(head -c 300 "$T/err")"
}

# The subcommands, from `zofuzz help`: indented lowercase words.
CMDS=$("$Z" help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p')
[ -n "$CMDS" ] || { say "FAIL: no subcommands in zofuzz help" >&2; exit 1; }

# A valid base command line per subcommand (the option under test is
# appended); --time 1 etc. keep an accepted command short.
base() {
    case "$1" in
        run) echo "run --time 1 --no-seeds --work $T/work" ;;
        repro | trace | print) echo "$1 $R" ;;
        minimize) echo "minimize $R --max-runs 10" ;;
        check) echo "check --trials 1" ;;
        compile) echo "compile $R -o $T/c.bin" ;;
        verify) echo "verify $R" ;;
        seeds) echo "seeds -o $T/seeds $R" ;;
        export) echo "export $R --to torch -o $T/x.py" ;;
        enumerate) echo "enumerate --max-modules 1 --max-calls 1 --max-steps 1 --count" ;;
        traces) mkdir -p "$T/tr"; echo "traces $T/tr $R" ;;
        gen) echo "gen --seed 1 -o $T/g.bin" ;;
        *) echo "$1" ;;
    esac
}

# The base without option $2 (and its value) when it already has it.
base_without() {
    local cmd="$1" opt="$2" skip=0 out="" w
    for w in $(base "$cmd"); do
        if [ "$skip" = 1 ]; then skip=0; continue; fi
        if [ "$w" = "$opt" ]; then
            case "$3" in "") ;; *) skip=1 ;; esac
            continue
        fi
        out="$out $w"
    done
    echo "$out"
}

# The options of a subcommand, from the usage synopsis (the lines from
# "usage:" to the first blank line): "[-o OUT]", "[--quiet]",
# "[--engine-arg ARG]...", "[--text|--bytes]", "--to torch|deepspeed".
# Prints "OPT<TAB>METAVAR<TAB>REPEATABLE" lines.
options() {
    "$Z" "$1" --help 2>&1 | awk '/^usage:/{u=1; print; next} u&&/^[[:space:]]+(\[|[a-z]+ --)/{print; next} u{exit}' |
        python3 -c '
import re, sys
syn = sys.stdin.read()
seen = {}
for m in re.finditer(r"(\[)?(-{1,2}[a-z][a-z0-9-]*)((?:\|-{1,2}[a-z][a-z-]*)*)(?: ([A-Za-z][A-Za-z0-9_,|/]*(?:\.[a-z]+)?))?(\])?(\.\.\.)?", syn):
    opt, alts, meta, rep = m.group(2), m.group(3), m.group(4) or "", m.group(6) or ""
    if opt in ("--help", "-h"): continue
    for o in [opt] + [a for a in alts.split("|") if a]:
        if o not in seen:
            seen[o] = (meta if not alts else "", "rep" if rep else "")
for o, (meta, rep) in seen.items():
    print(f"{o}\t{meta}\t{rep}")
'
}

# a value of the wrong shape for metavar $1, or nothing when any string is valid
malformed() {
    case "$1" in
        N | S | K | J | R | BYTES | i/n) echo "12x" ;;
        *'|'* | P | T | I | O | LIST | K,...) echo "bogus-value" ;;
        *) echo "" ;;
    esac
}
is_number() { case "$1" in N | S | K | J | R | BYTES) return 0 ;; esac; return 1; }
is_output() { case "$1" in OUT* | DIR | FILE | PREFIX | FILE.bin) return 0 ;; esac; return 1; }
# a valid value (for the repeated case)
valid() {
    case "$1" in
        N | S | K | J | R | BYTES) echo 1 ;;
        P) echo per-call ;;
        T) echo fuzz_api ;;
        i/n) echo 0/1 ;;
        I) echo I1 ;;
        *'|'*) echo "${1%%|*}" ;;
        OUT.scn) echo "$T/o.scn" ;;
        OUT.py) echo "$T/o.py" ;;
        FILE.bin) echo "$T/o.bin" ;;
        DIR) echo "$T/d" ;;
        *) echo "$T/v" ;;
    esac
}

nopt=0
for cmd in $CMDS; do
    opts=$(options "$cmd")
    [ -n "$opts" ] || continue
    while IFS="$(printf '\t')" read -r opt meta rep; do
        nopt=$((nopt + 1))
        b=$(base_without "$cmd" "$opt" "$meta")
        if [ -n "$meta" ]; then
            # shellcheck disable=SC2086
            expect2 "$cmd $opt missing" "$opt" "$Z" $b "$opt"
            v=$(malformed "$meta")
            if [ -n "$v" ]; then
                # shellcheck disable=SC2086
                expect2 "$cmd $opt malformed" "$opt|$v" "$Z" $b "$opt" "$v"
            fi
            if is_number "$meta"; then
                for v in -1 1180591620717411303424; do
                    # shellcheck disable=SC2086
                    expect2 "$cmd $opt range" "$opt|$v" "$Z" $b "$opt" "$v"
                done
            fi
            if is_output "$meta" && [ "$cmd" != verify ]; then
                # shellcheck disable=SC2086
                expect2 "$cmd $opt unwritable" "/proc/nope" "$Z" $b "$opt" /proc/nope/x
            fi
        fi
        if [ -z "$rep" ]; then
            v=$(valid "$meta")
            if [ -n "$meta" ]; then
                # shellcheck disable=SC2086
                expect2 "$cmd $opt repeated" "$opt" "$Z" $b "$opt" "$v" "$opt" "$v"
            else
                # shellcheck disable=SC2086
                expect2 "$cmd $opt repeated" "$opt" "$Z" $b "$opt" "$opt"
            fi
        fi
    done <<EOF
$opts
EOF
done

# ---------------------------------------------------------------- files
: >"$T/empty"
mkdir -p "$T/dir"
head -c 4096 "$Z" >"$T/binary" # an ELF header, NUL bytes, anything
printf '\001\002\003\000\377' >"$T/binary.scn"
for cmd in $CMDS; do
    # the subcommands whose synopsis has a FILE or DIR operand
    syn=$("$Z" "$cmd" --help 2>&1 | awk '/^usage:/{u=1} u&&/^[[:space:]]*$/{exit} u')
    case "$syn" in *"$cmd FILE"* | *"FILE.scn"* | *"CORPUS"* | *"merge FILE"*) ;; *) continue ;; esac
    bytes_ok=0
    case "$syn" in *"--bytes"*) bytes_ok=1 ;; esac
    args() { # the command line with input $1
        case "$cmd" in
            run) echo "run --time 1 --no-seeds --work $T/work $1" ;;
            compile) echo "compile $1 -o $T/c.bin" ;;
            seeds) echo "seeds -o $T/seeds $1" ;;
            export) echo "export $1 --to torch -o $T/x.py" ;;
            enumerate) echo "enumerate --merge $1" ;;
            minimize) echo "minimize $1 --max-runs 10" ;;
            *) echo "$cmd $1" ;;
        esac
    }
    # shellcheck disable=SC2046
    expect2 "$cmd on a missing file" "$T/missing" "$Z" $(args "$T/missing")
    if [ "$cmd" = run ]; then
        # its operands are corpus directories: a file is the mistake
        # shellcheck disable=SC2046
        expect2 "$cmd on a file" "not a directory" "$Z" $(args "$T/empty")
    else
        # an empty directory for those that take directories of .scn files
        # shellcheck disable=SC2046
        expect2 "$cmd on a directory" "directory" "$Z" $(args "$T/dir")
        # shellcheck disable=SC2046
        expect2 "$cmd on an empty file" "empty|$T/empty" "$Z" $(args "$T/empty")
    fi
    if [ "$bytes_ok" = 1 ]; then
        # fuzzer bytes are a documented input: decoded, exit 0 or 1, never a crash or a hang
        cases=$((cases + 1))
        # shellcheck disable=SC2046
        run "$Z" $(args "$T/binary")
        case "$RC" in 0 | 1) ;; *) bad "$cmd on a binary file: exit $RC :: $(head -c 300 "$T/err")" ;; esac
    elif [ "$cmd" != run ]; then
        # shellcheck disable=SC2046
        expect2 "$cmd on a binary .scn" "binary.scn" "$Z" $(args "$T/binary.scn")
    fi
done

say "cli_matrix: $cases cases over $nopt options of $(echo $CMDS | wc -w) subcommands, $fails failed"
[ "$fails" = 0 ]
