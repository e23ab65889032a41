#!/usr/bin/env bash
# tests/gpu/launch_ranks.sh N CMD [ARGS...] - starts N processes of CMD, one
# per GPU, with the launcher variables the NCCL backend reads
# (WORLD_SIZE, RANK, LOCAL_RANK), a fresh bootstrap directory passed as
# ZO_NCCL_BOOTSTRAP_DIR (and substituted for the word @DIR@ in ARGS) and a
# unique ZO_NCCL_RUN_ID.  Rank r's output goes to stdout prefixed "[rank r] "
# (rank 0 unprefixed).  Exit status 0 when every rank exited 0.
# A stand-in for `mpirun -np N` / `torchrun --nproc-per-node N` on one node.
set -uo pipefail
n="${1:?usage: launch_ranks.sh N CMD [ARGS...]}"
shift
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
export ZO_NCCL_BOOTSTRAP_DIR="$dir" ZO_NCCL_RUN_ID="launch-$$-$RANDOM"
args=()
for a in "$@"; do args+=("${a//@DIR@/$dir}"); done
pids=()
for ((r = 0; r < n; r++)); do
    WORLD_SIZE="$n" RANK="$r" LOCAL_RANK="$r" "${args[@]}" >"$dir/out.$r" 2>&1 &
    pids+=($!)
done
rc=0
for r in "${!pids[@]}"; do
    wait "${pids[$r]}" || { echo "[launch_ranks] rank $r exited with status $?" >&2; rc=1; }
done
cat "$dir/out.0"
for ((r = 1; r < n; r++)); do sed "s/^/[rank $r] /" "$dir/out.$r"; done
exit $rc
