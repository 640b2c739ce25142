#!/usr/bin/env bash
# Real per-rank captures on a one-GPU machine (issues 17 and 24 while no two-GPU machine is lent):
# examples/workloads/tp_stages.py as 2 ranks under torchrun sharing the GPU (gloo: NCCL refuses
# two ranks on one device), rank 1 slowed by --slow-ms before each all-reduce.
#   1. the kernlens tracer in every rank: one .kltrace per process, and each analyzed alone
#      (checks the "NVTX ranges never end" report under torchrun);
#   2. each rank's PyTorch profiler trace of the measured prefill (distributedInfo, gloo);
#   3. the documented command, `torchrun --nproc-per-node 2 --no-python kernlens profile --ranks
#      0 ...`, with a time limit, and its run directory.
# Uses build/devrun (scripts/device/make_devrun.sh). Writes OUT/multirank.tgz and OUT/log.txt.
#   scripts/device/multirank_one_gpu.sh OUT
set -u
out=${1:?usage: multirank_one_gpu.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=$(mktemp -d)
mkdir -p "$out" "$work/tracer" "$work/torch" "$work/runs"
log=$out/log.txt
workload=(python3 "$root/examples/workloads/tp_stages.py" --layers 2 --batch 4 --prompt 128
          --decode-steps 4 --slow-rank 1 --slow-ms 20)
step() { echo "== $* ($(date +%T))" >> "$log"; }

step "tracer in every rank"
CUDA_INJECTION64_PATH=$devrun/libkernlens_tracer.so NVTX_INJECTION64_PATH=$devrun/libkernlens_tracer.so \
  KERNLENS_TRACE_DIR=$work/tracer timeout 150 torchrun --nproc-per-node 2 --no-python "${workload[@]}" >> "$log" 2>&1
echo "rc=$?" >> "$log"
for f in "$work"/tracer/*.kltrace; do
  step "analyze $(basename "$f")"
  "$devrun/kernlens" analyze "$f" >> "$log" 2>&1; echo "rc=$?" >> "$log"
done

step "PyTorch traces per rank"
timeout 150 torchrun --nproc-per-node 2 --no-python "${workload[@]}" --torch-trace "$work/torch" >> "$log" 2>&1
echo "rc=$?" >> "$log"

step "kernlens profile --ranks 0 under torchrun, as --help documents it"
start=$(date +%s)
timeout 120 torchrun --nproc-per-node 2 --no-python "$devrun/kernlens" profile --ranks 0 --discovery tracer \
  --top 3 --tier quick --clock-control none --nvtx-include prefill --out "$work/runs" --run-id tp_rank0 \
  -- "${workload[@]}" >> "$log" 2>&1
echo "rc=$? wall_s=$(( $(date +%s) - start ))" >> "$log"
cat "$work"/runs/*/manifest.json >> "$log" 2>/dev/null

tar czf "$out/multirank.tgz" -C "$work" tracer torch runs
rm -rf "$work"
