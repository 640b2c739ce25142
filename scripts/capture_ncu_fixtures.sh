#!/usr/bin/env bash
# Captures the Nsight Compute exports kernlens tests against, on a GPU machine.
# Usage: scripts/capture_ncu_fixtures.sh OUTDIR
# Always --clock-control none: the GPU may be shared; never change its clocks.
set -u
out=${1:?usage: capture_ncu_fixtures.sh OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" && cd "$out" || exit 2
NCU=${NCU:-ncu}
log() { echo "== $*" >&2; }

{ $NCU --version; nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; } > versions.txt 2>&1
$NCU --help > ncu_help.txt 2>&1
$NCU --list-sections > ncu_list_sections.txt 2>&1

log "build nvtx_demo"
nvcc -O2 -arch=native -o nvtx_demo "$here/examples/workloads/nvtx_demo.cu" 2> build.log || { cat build.log; exit 3; }
./nvtx_demo > nvtx_demo_plain.txt 2>&1

log "profile nvtx_demo (report)"
$NCU --clock-control none --nvtx --set basic --metrics sass__inst_executed_per_opcode \
     -o demo -f ./nvtx_demo > demo_profile.log 2>&1; echo "rc=$?" >> demo_profile.log
for variant in \
  "raw_dynamic:--page raw --csv" \
  "raw_base:--page raw --csv --print-units base" \
  "raw_instances:--page raw --csv --print-units base --print-metric-instances values" \
  "raw_instances_details:--page raw --csv --print-metric-instances details" \
  "raw_mangled:--page raw --csv --print-kernel-base mangled" \
  "details:--page details --csv" \
  "details_all:--page details --csv --print-details all" \
  "summary:--csv --print-summary per-kernel" \
  "summary_gpu:--csv --print-summary per-gpu" \
  "raw_nvtx_rename:--page raw --csv --print-nvtx-rename kernel"; do
  name=${variant%%:*}; args=${variant#*:}
  # shellcheck disable=SC2086
  $NCU --import demo.ncu-rep $args > "demo_$name.csv" 2> "demo_$name.err"
done

log "ncu straight to stdout: ==PROF== lines mixed into the CSV"
$NCU --clock-control none --nvtx --section SpeedOfLight --csv --page raw ./nvtx_demo \
     > demo_live_raw_stdout.csv 2>&1

log "llm prefill, default (dynamic) units"
export PYTHONUNBUFFERED=1
timeout 300 $NCU --clock-control none --target-processes all --nvtx --nvtx-include "prefill/" \
     --section SpeedOfLight --section LaunchStats -c 40 -o llama_prefill -f \
     python3 "$here/examples/workloads/llm_stages.py" --model llama --warmup 0 --decode-steps 2 \
     > llama_prefill_profile.log 2>&1; echo "rc=$?" >> llama_prefill_profile.log
$NCU --import llama_prefill.ncu-rep --page raw --csv > llama_prefill_raw_dynamic.csv 2>&1
$NCU --import llama_prefill.ncu-rep --page details --csv > llama_prefill_details.csv 2>&1
ls -la >&2
