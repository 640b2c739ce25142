#!/usr/bin/env bash
# Issue 17 on a two-GPU machine (nvidia-h200-x2): examples/workloads/tp_stages.py as 2-way
# tensor parallel over NCCL (all-reduce per layer), rank 1 slowed 20 ms before each
# all-reduce, captured two ways, each analyzed as one multi-rank profile:
#   1. each rank's PyTorch profiler trace (distributedInfo backend nccl, ncclDevKernel_AllReduce
#      kernels with "In msg nelems"/"dtype"), then `kernlens analyze rank-0 rank-1 --format json`
#      and the independent overlap check (tests/independent/check_rank_overlap.py), which must
#      name rank 1 as the straggler;
#   2. the kernlens tracer in every rank (one .kltrace per process), analyzed together.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0, the device README). Uses build/devrun
# (scripts/device/make_devrun.sh). Writes OUT/multigpu.tgz (the captures and analyses) and
# OUT/log.txt.
#   scripts/device/multigpu_two_gpus.sh OUT
# Env: SHAPE (tp_stages.py's model options, default "--layers 2 --batch 4 --prompt 128
#      --decode-steps 4"), SLOW_RANK (the rank slowed and expected as the straggler, default 1).
set -u
out=${1:?usage: multigpu_two_gpus.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0
work=$(mktemp -d)
mkdir -p "$out" "$work/tracer" "$work/torch"
log=$out/log.txt
slow=${SLOW_RANK:-1}
# shellcheck disable=SC2206  # SHAPE is a list of options
workload=(python3 "$root/examples/workloads/tp_stages.py" ${SHAPE:---layers 2 --batch 4 --prompt 128 --decode-steps 4}
          --slow-rank "$slow" --slow-ms 20)
step() { echo "== $* ($(date +%T))" >> "$log"; }
nvidia-smi -L >> "$log" 2>&1

step "PyTorch traces per rank (NCCL)"
timeout 150 torchrun --nproc-per-node 2 --no-python "${workload[@]}" --torch-trace "$work/torch" >> "$log" 2>&1
echo "rc=$?" >> "$log"
traces=("$work"/torch/*.json*)
step "analyze the ranks together"
"$devrun/kernlens" analyze "${traces[@]}" > "$work/torch_analysis.txt" 2>> "$log"; echo "rc=$?" >> "$log"
sed -n '/^Ranks/,$p' "$work/torch_analysis.txt" >> "$log"
"$devrun/kernlens" analyze "${traces[@]}" --format json > "$work/torch_analysis.json" 2>> "$log"
step "independent overlap check (expects rank $slow the straggler)"
python3 "$root/tests/independent/check_rank_overlap.py" --kernlens "$devrun/kernlens" --straggler "0=$slow" \
  "$(IFS=,; echo "${traces[*]}")" >> "$log" 2>&1
echo "rc=$?" >> "$log"

step "tracer in every rank"
CUDA_INJECTION64_PATH=$devrun/libkernlens_tracer.so NVTX_INJECTION64_PATH=$devrun/libkernlens_tracer.so \
  KERNLENS_TRACE_DIR=$work/tracer timeout 150 torchrun --nproc-per-node 2 --no-python "${workload[@]}" >> "$log" 2>&1
echo "rc=$?" >> "$log"
"$devrun/kernlens" analyze "$work"/tracer/*.kltrace > "$work/tracer_analysis.txt" 2>> "$log"; echo "rc=$?" >> "$log"
sed -n '/^Ranks/,$p' "$work/tracer_analysis.txt" >> "$log"

tar czf "$out/multigpu.tgz" -C "$work" tracer torch torch_analysis.txt torch_analysis.json tracer_analysis.txt
rm -rf "$work"
