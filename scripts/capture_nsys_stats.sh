#!/usr/bin/env bash
# Looks for a working `nsys stats` on a GPU machine (where nsys cannot profile, its stats
# scripts may still run on an existing SQLite export), runs the kernel-summary reports in
# CSV on the given exports, and captures a PyTorch trace with record_function stages.
# Usage: scripts/capture_nsys_stats.sh OUTDIR EXPORT.sqlite...
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: capture_nsys_stats.sh OUTDIR EXPORT.sqlite...}; shift
inputs=()
for f in "$@"; do inputs+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"); done
mkdir -p "$out" && cd "$out" || exit 2
export PYTHONUNBUFFERED=1
{
  echo "== which nsys: $(command -v nsys)"
  find / -xdev \( -name nsys -o -name 'nsys.exe' \) -type f 2>/dev/null | head -20
  ls -d /opt/nvidia/* /usr/local/cuda*/ 2>/dev/null
} > nsys_search.txt 2>&1
nsys=$(command -v nsys || find / -xdev -name nsys -type f -perm -u+x 2>/dev/null | head -1)
echo "nsys: $nsys" >> nsys_search.txt
if [ -n "$nsys" ]; then
  timeout 60 "$nsys" --version > nsys_version.txt 2>&1
  timeout 60 "$nsys" stats --help > nsys_stats_help.txt 2>&1
  timeout 60 "$nsys" stats --help-reports > nsys_stats_reports.txt 2>&1
  for db in "${inputs[@]}"; do
    base=$(basename "$db" .sqlite)
    cp "$db" "work_$base.sqlite"
    for report in cuda_gpu_kern_sum "cuda_gpu_kern_sum:base" "cuda_gpu_kern_sum:nvtx-name" gpukernsum cuda_gpu_mem_time_sum nvtx_sum; do
      tag=$(echo "$report" | tr ':' '_')
      timeout 120 "$nsys" stats --report "$report" --format csv --output - "work_$base.sqlite" \
        > "stats_${base}_${tag}.csv" 2> "stats_${base}_${tag}.err"
      echo "rc=$?" >> "stats_${base}_${tag}.err"
    done
    # The preamble nsys prints when writing to stdout without -q, as users see it.
    timeout 120 "$nsys" stats --report cuda_gpu_kern_sum --format csv "work_$base.sqlite" \
      > "stats_${base}_console.txt" 2>&1
  done
fi
timeout 200 python3 "$here/examples/workloads/llm_stages.py" --model llama --decode-steps 15 \
  --torch-trace llama_stages_trace.json.gz > llama_stages.log 2>&1; echo "rc=$?" >> llama_stages.log
rm -f work_*.sqlite
ls -la >&2
