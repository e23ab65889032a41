#!/usr/bin/env bash
# tools/oracle_venv.sh - create (once) and cache the Python environments of
# the oracles (tools/torch_oracle.py, tools/deepspeed_oracle.py).
#
#   tools/oracle_venv.sh --current [VENV_DIR]   the reference stack
#   tools/oracle_venv.sh [--legacy] [VENV_DIR]  the legacy stack
#
# current (the reference, default VENV_DIR <repo>/.venv-current): PyPI's
#   torch==2.15.0 and deepspeed==0.19.8 (ZO_TORCH_VERSION and
#   ZO_DEEPSPEED_CURRENT override) on Debian's /usr/bin/python3.  PyPI's
#   torch wheel for linux-x86_64 is the CUDA build (~0.9 GB plus ~4 GB of
#   nvidia-* wheels; the CPU runs never load CUDA).  The venv itself lives
#   in a cache outside the checkout, ${ZO_VENV_CACHE:-~/.cache/zoffload}/
#   venv-torch<T>-ds<D>, and VENV_DIR is a symbolic link to it, so a fresh
#   clone on the same machine reuses it.  DeepSpeed is installed with
#   DS_BUILD_OPS=0: no C++/CUDA op is compiled at install time.  It also
#   gets transformers==5.24.0 and peft==0.21.2 (ZO_TRANSFORMERS_VERSION,
#   ZO_PEFT_VERSION) for the model capture (python/zoffload.capture,
#   tools/capture_models.py); a cached venv without them gets them by an
#   incremental pip install (no torch reinstall), recorded in .oracle-ok as a
#   "capture transformers T peft P" line.  Failing to install them is a
#   warning: the capture tests skip.
# legacy (default VENV_DIR <repo>/.venv-oracle): deepspeed==0.15.4
#   (ZO_DEEPSPEED_VERSION overrides) from PyPI over Debian's CPU-only
#   python3-torch 1.13.1 (--system-site-packages).  0.15.4 is the newest
#   release that runs on torch 1.13: 0.12.x's CPU accelerator refuses to
#   start without intel_extension_for_pytorch; 0.16.9 needs torch 2.
#
# Both are checked the same way before they are marked ready: torch and
# deepspeed import, and one tiny scenario runs through deepspeed_oracle.py
# (which also JIT-builds, in its own private extensions folder, anything
# DeepSpeed's CPU accelerator builds at start).  VENV_DIR/.oracle-ok holds
# the versions and the install time in seconds.
#
# Idempotent: when VENV_DIR/.oracle-ok exists and its python finds torch and
# deepspeed, it prints the path and exits 0 at once.
# Exit codes: 0 ready, 1 failed (message on stderr), 2 bad usage, 77 it
# cannot be built here (legacy: no torch for /usr/bin/python3; current: the
# package registry cannot be reached) - ctest's skip code.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
stack=legacy
venv=
for arg in "$@"; do
    case "$arg" in
        --current) stack=current ;;
        --legacy) stack=legacy ;;
        -h|--help) sed -n '2,36p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "oracle_venv: unknown option '$arg' (--current, --legacy, --help)" >&2; exit 2 ;;
        *)
            if [[ -n "$venv" ]]; then
                echo "oracle_venv: more than one VENV_DIR ('$venv', '$arg')" >&2
                exit 2
            fi
            venv=$arg ;;
    esac
done
py=/usr/bin/python3
torch_version=${ZO_TORCH_VERSION:-2.15.0}
if [[ $stack == current ]]; then
    ds_version=${ZO_DEEPSPEED_CURRENT:-0.19.8}
    venv=${venv:-$here/.venv-current}
else
    ds_version=${ZO_DEEPSPEED_VERSION:-0.15.4}
    venv=${venv:-$here/.venv-oracle}
fi

# VENV_DIR is replaced when it is not ready: it must be a new path, a
# Python venv (pyvenv.cfg) or a link that points nowhere any more - never
# a folder of something else ('oracle docs' would have deleted docs/)
if [[ -e $venv && ! -f $venv/pyvenv.cfg ]]; then
    echo "oracle_venv: $venv exists and is not a Python venv (no pyvenv.cfg): not replacing it" \
        "(give --current, --legacy, or a VENV_DIR that is new or a venv)" >&2
    exit 2
fi

check() {
    [ -x "$venv/bin/python" ] &&
        DS_ACCELERATOR=cpu "$venv/bin/python" -c 'import torch, deepspeed' >/dev/null 2>&1
}
# the cached venv: its marker, and both packages findable (no slow import)
quick_check() {
    [ -f "$venv/.oracle-ok" ] && [ -x "$venv/bin/python" ] &&
        "$venv/bin/python" -c 'import sys, importlib.util as u
sys.exit(0 if u.find_spec("torch") and u.find_spec("deepspeed") else 1)' >/dev/null 2>&1
}

# current stack: transformers and peft for the capture, added to a cached
# venv incrementally (its marker gets a "capture ..." line)
hf_version=${ZO_TRANSFORMERS_VERSION:-5.24.0}
peft_version=${ZO_PEFT_VERSION:-0.21.2}
capture_pkgs() {
    [[ $stack == current ]] || return 0
    local line="capture transformers $hf_version peft $peft_version"
    if grep -qxF "$line" "$venv/.oracle-ok" 2>/dev/null &&
        "$venv/bin/python" -c 'import sys, importlib.util as u
sys.exit(0 if u.find_spec("transformers") and u.find_spec("peft") else 1)' >/dev/null 2>&1; then
        return 0
    fi
    echo "oracle_venv: installing transformers==$hf_version peft==$peft_version into $venv (capture)" >&2
    if timeout 900 "$venv/bin/python" -m pip install --disable-pip-version-check -q \
        "transformers==$hf_version" "peft==$peft_version" >&2; then
        grep -v '^capture ' "$venv/.oracle-ok" >"$venv/.oracle-ok.tmp" 2>/dev/null || true
        echo "$line" >>"$venv/.oracle-ok.tmp"
        mv "$venv/.oracle-ok.tmp" "$venv/.oracle-ok"
    else
        echo "oracle_venv: WARNING: transformers/peft not installed; the capture tests skip" >&2
    fi
    return 0
}

if quick_check; then
    capture_pkgs
    echo "$venv"
    exit 0
fi

[[ -x $py ]] || { echo "oracle_venv: no $py (apt-get install python3)" >&2; exit 77; }
"$py" -c 'import ensurepip' >/dev/null 2>&1 ||
    { echo "oracle_venv: $py has no venv support (apt-get install python3-venv)" >&2; exit 1; }

t0=$SECONDS
if [[ $stack == current ]]; then
    cache=${ZO_VENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zoffload}
    real=$cache/venv-torch$torch_version-ds$ds_version
    if [[ -e $venv && ! -L $venv ]]; then
        echo "oracle_venv: $venv exists and is not a link to the cache: remove it first" >&2
        exit 1
    fi
    mkdir -p "$cache"
    if [[ -f $real/.oracle-ok ]]; then
        ln -sfn "$real" "$venv"
        if quick_check; then capture_pkgs; echo "$venv"; exit 0; fi
    fi
    # the registry must answer, or this is a machine without it: skip
    if ! timeout 60 "$py" -m pip download --disable-pip-version-check -q --no-deps \
        -d "$(mktemp -d)" "deepspeed==$ds_version" >/dev/null 2>&1; then
        echo "oracle_venv: PyPI cannot be reached (pip download deepspeed==$ds_version failed): no current-stack venv" >&2
        exit 77
    fi
    echo "oracle_venv: creating $real (torch==$torch_version, deepspeed==$ds_version from PyPI; ~5 GB)" >&2
    rm -rf "$real"
    "$py" -m venv "$real"
    "$real/bin/python" -m pip install --disable-pip-version-check -q "torch==$torch_version" >&2
    DS_BUILD_OPS=0 "$real/bin/python" -m pip install --disable-pip-version-check -q \
        "deepspeed==$ds_version" >&2
    ln -sfn "$real" "$venv"
else
    if ! "$py" -c 'import torch' >/dev/null 2>&1; then
        echo "oracle_venv: $py cannot import torch (apt-get install python3-torch)" >&2
        exit 77
    fi
    echo "oracle_venv: creating $venv (deepspeed==$ds_version over Debian's torch)" >&2
    rm -rf "$venv"
    "$py" -m venv --system-site-packages "$venv"
    DS_BUILD_OPS=0 "$venv/bin/python" -m pip install --disable-pip-version-check -q \
        "deepspeed==$ds_version" >&2
fi
if ! check; then
    echo "oracle_venv: torch/deepspeed do not import:" >&2
    DS_ACCELERATOR=cpu "$venv/bin/python" -c 'import torch, deepspeed' >&2 || true
    exit 1
fi
# warm-up: one tiny scenario through both oracles, so that anything the
# CPU accelerator builds at start is built now, not in a test
warm=$(mktemp -d)
trap 'rm -rf "$warm"' EXIT
cat >"$warm/w.json" <<'JSON'
{"format": "zoffload-scenario", "version": 1,
 "config": {"policy": "reset-on-forward", "world_size": 1, "rank": 0, "order": "engine", "deferred": 0,
            "progress_every": 0, "param_persistence_threshold": 0, "model_persistence_threshold": "inf",
            "prefetch_bucket_size": 50000000, "max_live_parameters": 1000000000, "max_reuse_distance": 1000000000},
 "modules": [{"id": 0, "parent": -1, "z3_leaf": false, "name": ""}],
 "params": [{"id": 0, "owner": 0, "numel": 4, "elem_size": 4, "frozen": false, "name": ""}],
 "uses": [],
 "steps": [{"kind": "train", "passes": [{"loss": [0], "calls": [
   {"id": 0, "module": 0, "parent": -1, "no_grad": false, "checkpoint": "none", "raise": false, "catcher": -1,
    "inputs": [{"kind": "batch_rg", "call": 0, "index": 0, "detach": false}], "n_out": 1,
    "uses": [{"kind": "arg", "call": 0, "index": 0, "detach": false}]}]}]}],
 "order": []}
JSON
tp=2.x dp=0.19
[[ $stack == legacy ]] && tp=1.13 dp=0.15
if ! DS_ACCELERATOR=cpu timeout 600 "$venv/bin/python" "$here/tools/deepspeed_oracle.py" --ds-profile "$dp" \
        "$warm/w.json" \
        >"$warm/out" 2>&1 || ! grep -q '^POST m=0' "$warm/out"; then
    echo "oracle_venv: the DeepSpeed oracle does not run:" >&2
    tail -20 "$warm/out" >&2
    exit 1
fi
if ! timeout 300 "$venv/bin/python" "$here/tools/torch_oracle.py" --torch-profile "$tp" \
        --policy reset-on-forward "$warm/w.json" >"$warm/out" 2>&1 || ! grep -q '^POST m=0' "$warm/out"; then
    echo "oracle_venv: the PyTorch oracle does not run:" >&2
    tail -20 "$warm/out" >&2
    exit 1
fi
DS_ACCELERATOR=cpu "$venv/bin/python" -c \
    'import torch, deepspeed; print("torch", torch.__version__, "deepspeed", deepspeed.__version__)' \
    2>/dev/null | tail -n1 >"$warm/ok"
echo "install_seconds $((SECONDS - t0))" >>"$warm/ok"
cp "$warm/ok" "$venv/.oracle-ok"
capture_pkgs
cat "$venv/.oracle-ok" >&2
echo "$venv"
