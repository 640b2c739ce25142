#!/usr/bin/env bash
# Issues 17 and 24 on nvidia-h200-x2, in one device call (about 6-8 minutes):
#   OUT/tp      scripts/device/multigpu_two_gpus.sh: 2-way tensor parallel over NCCL, rank 1
#               slowed, PyTorch traces and tracer captures, analyzed together, with the
#               independent overlap check;
#   OUT/ranks   scripts/device/ranks_one_gpu.sh with TOP=20: the documented
#               `torchrun --no-python kernlens profile --ranks 0` and `--ranks all`, now with a
#               GPU (and NCCL) per rank;
#   OUT/dp      examples/workloads/dp_step.py: a DDP training step over NCCL, rank 0 slowed,
#               each rank's PyTorch trace analyzed together and checked independently.
# NCCL_NVLS_ENABLE=0 throughout (the device README). Uses build/devrun.
#   scripts/device/two_gpus.sh OUT
set -u
out=${1:?usage: two_gpus.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
export NCCL_NVLS_ENABLE=0
mkdir -p "$out/dp"
"$root/scripts/device/multigpu_two_gpus.sh" "$out/tp"
TOP=20 "$root/scripts/device/ranks_one_gpu.sh" "$out/ranks"
log=$out/dp/log.txt
devrun=$root/build/devrun
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=$(mktemp -d)
echo "== DDP step, rank 0 slowed 30 ms ($(date +%T))" >> "$log"
timeout 150 torchrun --nproc-per-node 2 --no-python python3 "$root/examples/workloads/dp_step.py" \
  --slow-rank 0 --slow-ms 30 --torch-trace "$work/torch" >> "$log" 2>&1
echo "rc=$?" >> "$log"
traces=("$work"/torch/*.json*)
"$devrun/kernlens" analyze "${traces[@]}" > "$work/dp_analysis.txt" 2>> "$log"; echo "rc=$?" >> "$log"
sed -n '/^Ranks/,$p' "$work/dp_analysis.txt" >> "$log"
"$devrun/kernlens" analyze "${traces[@]}" --format json > "$work/dp_analysis.json" 2>> "$log"
python3 "$root/tests/independent/check_rank_overlap.py" --kernlens "$devrun/kernlens" --straggler 0=0 \
  "$(IFS=,; echo "${traces[*]}")" >> "$log" 2>&1
echo "rc=$?" >> "$log"
tar czf "$out/dp/dp.tgz" -C "$work" torch dp_analysis.txt dp_analysis.json
rm -rf "$work"
