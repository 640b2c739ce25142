#!/usr/bin/env bash
# Two `kernlens profile` runs of the example workload that differ only in batch size (4 and 8),
# for `kernlens compare` (issue 8). Writes OUT/batch_runs.tar.gz.
#   scripts/device/batch_compare_runs.sh OUT
set -uo pipefail
out=$1
work=$(mktemp -d)
export LD_LIBRARY_PATH=$PWD/build/devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
for batch in 4 8; do
  build/devrun/kernlens profile --discovery ncu --tier roofline --nvtx-include prefill --out "$work/runs" \
    --run-id "llama_prefill_b$batch" --tag model=llama --tag batch="$batch" --tag tokens=256 --tag dtype=bf16 \
    --quiet -- \
    python3 examples/workloads/llm_stages.py --model llama --batch "$batch" --decode-steps 2 \
    > "$work/runs_b$batch.report.txt" 2> "$work/runs_b$batch.err"
  echo "batch $batch exit $?" | tee -a "$work/summary.txt"
done
find "$work/runs" -name "*.ncu-rep" -delete
tar -C "$work" -czf "$out/batch_runs.tar.gz" runs summary.txt runs_b4.err runs_b8.err
cat "$work/summary.txt"
