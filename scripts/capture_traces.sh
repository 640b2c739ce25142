#!/usr/bin/env bash
# Captures PyTorch profiler traces (eager, torch.compile/Triton, flash attention, fp32, a GEMM
# zoo) and Nsight Compute exports of the same GEMM kernels, on a GPU machine.
# Usage: scripts/capture_traces.sh OUTDIR [DEMO_REPORT.ncu-rep]
# Always --clock-control none: the GPU may be shared; never change its clocks.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: capture_traces.sh OUTDIR [demo.ncu-rep]}
demo_rep=${2:-}
[ -n "$demo_rep" ] && demo_rep=$(cd "$(dirname "$demo_rep")" && pwd)/$(basename "$demo_rep")
mkdir -p "$out" && cd "$out" || exit 2
W=$here/examples/workloads
NCU=${NCU:-ncu}
export PYTHONUNBUFFERED=1
log() { echo "== $(date +%T) $*" >&2; }

python3 -c 'import torch, transformers, triton; print("torch", torch.__version__, "transformers", transformers.__version__, "triton", triton.__version__)' > versions.txt 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> versions.txt 2>&1

run() {  # name timeout command...
  local name=$1 limit=$2; shift 2
  log "$name"
  timeout "$limit" "$@" > "$name.log" 2>&1; echo "rc=$?" >> "$name.log"
}
run gemm_zoo 120 python3 "$W/gemm_zoo.py" --torch-trace gemm_zoo_trace.json.gz
run llama_flash 150 python3 "$W/llm_stages.py" --model llama --sdpa-backend flash --decode-steps 4 --torch-trace llama_flash_trace.json.gz
run gpt2_fp32 150 python3 "$W/llm_stages.py" --model gpt2 --dtype fp32 --decode-steps 4 --torch-trace gpt2_fp32_trace.json.gz
run qwen_compile 300 python3 "$W/llm_stages.py" --model qwen --compile --decode-steps 4 --torch-trace qwen_compile_trace.json.gz

log "ncu on the GEMM zoo"
timeout 180 $NCU --clock-control none --nvtx --section SpeedOfLight -o gemm_zoo -f \
  python3 "$W/gemm_zoo.py" > gemm_zoo_ncu.log 2>&1; echo "rc=$?" >> gemm_zoo_ncu.log
$NCU --import gemm_zoo.ncu-rep --page raw --csv > gemm_zoo_raw.csv 2>&1
$NCU --import gemm_zoo.ncu-rep --page raw --csv --print-kernel-base mangled > gemm_zoo_raw_mangled.csv 2>&1

if [ -n "$demo_rep" ] && [ -f "$demo_rep" ]; then
  log "more export variants of $demo_rep"
  $NCU --import "$demo_rep" --csv --print-summary per-nvtx > demo_summary_nvtx.csv 2>&1
  $NCU --import "$demo_rep" --page details --csv --print-metric-name name > demo_details_metric_name.csv 2>&1
  $NCU --import "$demo_rep" --page details --csv --print-metric-name label-name > demo_details_label_name.csv 2>&1
  $NCU --import "$demo_rep" --page raw --csv --print-fp > demo_raw_fp.csv 2>&1
  $NCU --import "$demo_rep" --page session --csv > demo_session.csv 2>&1
fi
rm -f gemm_zoo.ncu-rep
ls -la >&2
