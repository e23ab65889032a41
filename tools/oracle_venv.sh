#!/usr/bin/env bash
# tools/oracle_venv.sh - create (once) and cache the Python environment of
# the DeepSpeed oracle (tools/deepspeed_oracle.py).
#
#   tools/oracle_venv.sh [VENV_DIR]      default: <repo>/.venv-oracle (gitignored by .venv*/)
#
# The venv is built on Debian's /usr/bin/python3 with --system-site-packages,
# so it uses Debian's CPU-only python3-torch (1.13.1) instead of downloading
# PyPI's torch wheel (which for linux-x86_64 is the CUDA build: ~0.8 GB plus
# ~2.5 GB of nvidia-* wheels).  Only DeepSpeed and its small pure-Python
# dependencies come from PyPI.  DeepSpeed is pinned (ZO_DEEPSPEED_VERSION
# overrides) to the newest release that runs on torch 1.13: 0.12.x's CPU
# accelerator refuses to start without intel_extension_for_pytorch (no wheel
# for this Python); 0.14.4 and 0.15.4 run without it; 0.16.9 needs torch 2
# (Module.register_forward_pre_hook(prepend=...)).
#
# Idempotent: when VENV_DIR/.oracle-ok exists and its python can import
# torch and deepspeed, it prints the path and exits 0 at once.
# Exit codes: 0 ready, 1 failed (message on stderr), 77 no torch for
# /usr/bin/python3 (install python3-torch first) - ctest's skip code.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${1:-$here/.venv-oracle}
ds_version=${ZO_DEEPSPEED_VERSION:-0.15.4}
py=/usr/bin/python3

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

if quick_check; then
    echo "$venv"
    exit 0
fi

if ! "$py" -c 'import torch' >/dev/null 2>&1; then
    echo "oracle_venv: $py cannot import torch (apt-get install python3-torch)" >&2
    exit 77
fi

echo "oracle_venv: creating $venv (deepspeed==$ds_version over Debian's torch)" >&2
rm -rf "$venv"
"$py" -m venv --system-site-packages "$venv"
# DS_BUILD_OPS=0: no C++/CUDA op is compiled at install time (the CPU
# accelerator JIT-builds nothing the stage-3 hooks need).
DS_BUILD_OPS=0 "$venv/bin/python" -m pip install --disable-pip-version-check -q \
    "deepspeed==$ds_version" >&2
if ! check; then
    echo "oracle_venv: deepspeed does not import:" >&2
    DS_ACCELERATOR=cpu "$venv/bin/python" -c 'import deepspeed' >&2 || true
    exit 1
fi
# warm-up: one tiny scenario through deepspeed_oracle.py, so that the CPU
# accelerator's JIT-built communication op (deepspeed_shm_comm, ~1 min with
# ninja, cached under ~/.cache/torch_extensions) is built now, not in a test
warm=$(mktemp -d)
cat >"$warm/w.json" <<'JSON'
{"format": "zoffload-scenario", "version": 1,
 "config": {"policy": "reset-on-forward", "world_size": 1, "rank": 0, "order": "engine", "deferred": 0,
            "progress_every": 0, "param_persistence_threshold": 0, "model_persistence_threshold": "inf",
            "prefetch_bucket_size": 50000000, "max_live_parameters": 1000000000, "max_reuse_distance": 1000000000},
 "modules": [{"id": 0, "parent": -1, "z3_leaf": false, "name": ""}],
 "params": [{"id": 0, "owner": 0, "numel": 1, "elem_size": 4, "frozen": false, "name": ""}],
 "uses": [],
 "steps": [{"kind": "train", "passes": [{"loss": [0], "calls": [
   {"id": 0, "module": 0, "parent": -1, "no_grad": false, "checkpoint": "none", "raise": false, "catcher": -1,
    "inputs": [{"kind": "batch_rg", "call": 0, "index": 0, "detach": false}], "n_out": 1,
    "uses": [{"kind": "arg", "call": 0, "index": 0, "detach": false}]}]}]}],
 "order": []}
JSON
if ! "$venv/bin/python" "$here/tools/deepspeed_oracle.py" "$warm/w.json" >"$warm/out" 2>&1 ||
    ! grep -q '^POST m=0' "$warm/out"; then
    echo "oracle_venv: the DeepSpeed oracle does not run:" >&2
    tail -20 "$warm/out" >&2
    rm -rf "$warm"
    exit 1
fi
rm -rf "$warm"
DS_ACCELERATOR=cpu "$venv/bin/python" -c \
    'import torch, deepspeed; print("torch", torch.__version__, "deepspeed", deepspeed.__version__)' \
    >"$venv/.oracle-ok" 2>/dev/null
cat "$venv/.oracle-ok" >&2
echo "$venv"
