#!/bin/sh
# export_run.sh ZOFUZZ SRCDIR EXTDIR - `zofuzz export --to deepspeed`
# scripts run on the reference stack (SRCDIR/.venv-current: torch 2.15 +
# DeepSpeed 0.19.8, CPU): the ALBERT reuse and a second forward under
# no_grad show I1 (exit 1), a scenario that holds on DeepSpeed's full
# engine exits 0 with the plain sentence.  Skips (77) without the venv.
# EXTDIR: TORCH_EXTENSIONS_DIR for DeepSpeed's JIT-built CPU comm op
# (kept between runs: the build takes minutes), unless the caller set one.
set -u
Z="$1"
SRC="$2"
PY="$SRC/.venv-current/bin/python"
if [ ! -x "$PY" ]; then
    echo "SKIP: $PY not found (the torch 2.15 + DeepSpeed 0.19.8 venv)"
    exit 77
fi
if ! "$PY" -c "import torch, deepspeed" >/dev/null 2>&1; then
    echo "SKIP: $PY cannot import torch and deepspeed"
    exit 77
fi
export TORCH_EXTENSIONS_DIR="${TORCH_EXTENSIONS_DIR:-$3}"
mkdir -p "$TORCH_EXTENSIONS_DIR"
export DS_ACCELERATOR=cpu
T="${TMPDIR:-/tmp}/zofuzz-export-run.$$"
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# run NAME [script args]: export corpus/regressions/NAME.scn, run it; $T/NAME.out, $rc
run() {
    n="$1"; shift
    "$Z" export "$SRC/corpus/regressions/$n.scn" --to deepspeed -o "$T/$n.py" || fail "export $n"
    (cd "$T" && "$PY" "$T/$n.py" "$@" >"$T/$n.out" 2>"$T/$n.err"); rc=$?
    echo "== $n $*: exit $rc: $(tail -n 1 "$T/$n.out")"
}

run module-reuse-albert
[ $rc = 1 ] || { cat "$T/module-reuse-albert.err"; fail "albert: exit $rc, expected 1"; }
grep -q '^POST m=1 c=0->-1$' "$T/module-reuse-albert.out" || fail "albert: no ds_grads_remaining 0->-1 line"
tail -n 1 "$T/module-reuse-albert.out" |
    grep -q "^VIOLATION I1: ds_grads_remaining of module 'layer' went to -1 in backward of step 0 (deepspeed " ||
    fail "albert: summary line"

run nograd-second-forward
[ $rc = 1 ] || { cat "$T/nograd-second-forward.err"; fail "nograd-second-forward: exit $rc, expected 1"; }
tail -n 1 "$T/nograd-second-forward.out" | grep -q "^VIOLATION I1: ds_grads_remaining of module 'block' went to -1" ||
    fail "nograd-second-forward: summary line"

run nograd-input
[ $rc = 0 ] || { cat "$T/nograd-input.err"; fail "nograd-input: exit $rc, expected 0"; }
tail -n 1 "$T/nograd-input.out" |
    grep -q "^no invariant violation on deepspeed [0-9.]* / torch [0-9.]*: the finding does not reproduce on this version$" ||
    fail "nograd-input: summary line"
echo "export_run.sh: all checks passed"
