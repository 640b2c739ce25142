#!/usr/bin/env bash
# Captures the exports issue 5 validates against, on a GPU machine: kernels of known work
# (examples/workloads/roofline_checks.py) with the roofline and memory sections, a llama
# decode with warp-state and scheduler sections, and what this ncu offers (sets, metrics).
# Usage: scripts/capture_roofline_checks.sh OUTDIR      (always --clock-control none)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: capture_roofline_checks.sh OUTDIR}
mkdir -p "$out" && cd "$out" || exit 2
NCU=${NCU:-ncu}
export PYTHONUNBUFFERED=1
W=$here/examples/workloads
log() { echo "== $(date +%T) $*" >&2; }
sections=(--section SpeedOfLight --section SpeedOfLight_RooflineChart
          --section SpeedOfLight_HierarchicalTensorRooflineChart
          --section SpeedOfLight_HierarchicalSingleRooflineChart
          --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis
          --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats)
# The SASS instruction counters FLOPs are counted from (the roofline sections give rates).
sass_counters=$(printf 'smsp__sass_thread_inst_executed_op_%s_pred_on.sum,' fadd fmul ffma hadd hmul hfma dadd dmul dfma)
sass_counters=${sass_counters}dram__bytes_read.sum,dram__bytes_write.sum
export_all() {  # report name
  $NCU --import "$1.ncu-rep" --page raw --csv --print-units base > "$1_raw.csv" 2>&1
  $NCU --import "$1.ncu-rep" --page raw --csv > "$1_raw_dynamic.csv" 2>&1
  $NCU --import "$1.ncu-rep" --page details --csv > "$1_details.csv" 2>&1
}
$NCU --list-sets > ncu_list_sets.txt 2>&1
$NCU --list-rules > ncu_list_rules.txt 2>&1
$NCU --query-metrics --chip gh100 > ncu_query_metrics_gh100.txt 2>&1

log "known-work kernels"
timeout 240 $NCU --clock-control none --nvtx \
  --nvtx-include "gemm_bf16_1024/" --nvtx-include "gemm_bf16_4096/" \
  --nvtx-include "gemm_fp32_1024/" --nvtx-include "scale_2GiB/" \
  "${sections[@]}" --metrics "$sass_counters" -o checks -f python3 "$W/roofline_checks.py" > checks_profile.log 2>&1
echo "rc=$?" >> checks_profile.log
export_all checks

log "llama decode, 40 kernels, warp states"
timeout 300 $NCU --clock-control none --target-processes all --nvtx --nvtx-include "decode/" \
  "${sections[@]}" --metrics "$sass_counters" -c 40 -o llama_decode -f \
  python3 "$W/llm_stages.py" --model llama --warmup 0 --decode-steps 3 > llama_decode_profile.log 2>&1
echo "rc=$?" >> llama_decode_profile.log
export_all llama_decode
rm -f llama_decode.ncu-rep  # large; the small checks report is kept for re-exports
ls -la >&2
