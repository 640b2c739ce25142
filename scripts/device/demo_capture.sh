#!/usr/bin/env bash
# The run `kernlens demo` shows (issue 21), captured on the GPU machine with the prebuilt
# build/devrun/kernlens and libkernlens_tracer.so (this script builds nothing):
#   a small Mixtral (mixture of experts: 8 experts, 2 per token; GQA: 16 query / 4 KV heads),
#   batch 1, one prefill of 128 tokens and 8 decode steps (one token a step: a launch-bound
#   decode), after one warm-up run that sits in an NVTX range "warmup" and is left out by
#   --nvtx-include; the kernlens tracer for the timeline, Nsight Compute (--tier roofline:
#   FLOP counters, roofline, warp stalls) on the 5 hottest kernels, --clock-control none.
# Should Mixtral fail to build (an old transformers), the qwen2-like model (GQA) is captured
# instead, in the same call. About 2 minutes of device time: two start-ups of the program.
#
#   scripts/device/demo_capture.sh OUT
#
# Writes OUT/demo_capture.log (what ran, exit codes, "No kernels were profiled" checks),
# OUT/demo_run.tgz (the run directory: manifest, analysis.json, discovery/ with the .kltrace,
# deep/ with the CSV exports gzipped; the .ncu-rep left out), and kernlens's own reading of it:
# OUT/demo_analyze.txt, OUT/demo_report.html, OUT/demo.trace.json.gz.
set -u
out=${1:?usage: demo_capture.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
kernlens=$devrun/kernlens
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out"
log=$out/demo_capture.log
runs=$(mktemp -d)
run=

for model in mixtral qwen; do
  echo "== kernlens profile, model $model ($(date -u +%FT%TZ))" >> "$log"
  timeout 300 "$kernlens" profile --discovery tracer --tier roofline --top 5 --clock-control none --quiet \
    --nvtx-include prefill --nvtx-include decode --out "$runs" --run-id "demo_$model" \
    --tag model="$model" --tag batch=1 --tag tokens=128 --tag dtype=bf16 -- \
    python3 "$root/examples/workloads/llm_stages.py" --model "$model" --batch 1 --prompt 128 \
    --decode-steps 8 --warmup 1 >> "$log" 2>&1
  rc=$?
  echo "profile $model rc=$rc" >> "$log"
  if [ $rc -eq 0 ]; then
    run=$runs/demo_$model
    break
  fi
done
if [ -z "$run" ]; then
  echo "FAILED: no run captured" | tee -a "$log"
  tar czf "$out/demo_failed_runs.tgz" -C "$runs" . 2>/dev/null
  rm -rf "$runs"
  exit 3
fi

if grep -l "No kernels were profiled" "$run"/deep/*.log >> "$log" 2>/dev/null; then
  echo "WARNING: ncu profiled no kernel in the files above" | tee -a "$log"
else
  echo "ncu: every deep run profiled kernels" >> "$log"
fi
find "$run" -name '*.ncu-rep' -delete
find "$run" -empty -type f -delete
gzip -9 "$run"/deep/*.csv 2>/dev/null
ls -lR "$run" >> "$log"

"$kernlens" analyze "$run" --top 10 > "$out/demo_analyze.txt" 2>&1
echo "analyze rc=$?" >> "$log"
"$kernlens" report "$run" -o "$out/demo_report.html" >> "$log" 2>&1
echo "report rc=$?" >> "$log"
"$kernlens" export "$run" --format perfetto -o "$out/demo.trace.json" >> "$log" 2>&1 && gzip -9 "$out/demo.trace.json"
echo "export rc=$? (a devrun binary older than issue 21 has no export)" >> "$log"

tar czf "$out/demo_run.tgz" -C "$runs" "$(basename "$run")"
rm -rf "$runs"
echo "done: $(basename "$run")" | tee -a "$log"
