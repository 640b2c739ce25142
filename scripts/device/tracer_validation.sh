#!/usr/bin/env bash
# Issue 7 on the GPU machine: the CUPTI tracer's overhead, size and accuracy on the example
# workload's decode-heavy run. Builds nothing: it uses the Release outputs copied into
# build/devrun/ (kernlens, libkernlens_tracer.so, and the libcupti.so.* it was linked with,
# in build/devrun/lib/ or beside the tracer).
#   scripts/device/tracer_validation.sh OUT [RUNS]        (RUNS: timed runs per mode, default 5)
# Writes into OUT (6 small files): summary.txt (every figure below), timings.tsv,
# tracer.analysis.json, torch.analysis.json, tracer.stderr.log, env.txt.
#  1. untraced and traced wall time, RUNS runs each (interleaved), median and ratio
#     (the issue's bar: traced <= 1.10 x untraced);
#  2. the .kltrace size against the PyTorch profiler's JSON of the same run (bar: >= 10x smaller);
#  3. kernel count and total kernel time per stage (prefill, decode) from `kernlens analyze
#     --format json` of both traces, and the % difference (bar: within 1%).
# Comparison runs use --warmup 0 so that both traces hold exactly one generate() call.
set -uo pipefail
out=${1:?usage: tracer_validation.sh OUT [RUNS]}
runs=${2:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
kernlens=$devrun/kernlens
tracer=$(ls "$devrun"/libkernlens_tracer.so "$devrun"/lib/libkernlens_tracer.so 2> /dev/null | head -1)
cupti=$(ls "$(dirname "$tracer")"/libcupti.so* "$devrun"/lib/libcupti.so* /usr/local/cuda/lib64/libcupti.so 2> /dev/null | head -1)
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=$(mktemp -d)
mkdir -p "$out"
summary=$out/summary.txt
workload=(python3 "$root/examples/workloads/llm_stages.py" --model llama --batch 1 --prompt 128 --decode-steps 64)
say() { echo "$*" | tee -a "$summary"; }
: > "$summary"
[[ -x $kernlens && -f $tracer ]] || { say "missing build/devrun/kernlens or libkernlens_tracer.so"; exit 2; }
say "tracer: $tracer"
say "cupti for NVTX: ${cupti:-none found (the tracer points NVTX at the CUPTI it loaded)}"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  ldd "$tracer"
} > "$out/env.txt" 2>&1

traced_env=(CUDA_INJECTION64_PATH="$tracer" KERNLENS_TRACE_DIR="$work/t")
[[ -n $cupti ]] && traced_env+=(NVTX_INJECTION64_PATH="$cupti")
wall() {  # prints the program's own wall_s of the measured generate(), and the process's total
  local start end line
  start=$(date +%s.%N)
  line=$("$@" 2>> "$out/tracer.stderr.log" | grep -o 'wall_s=[0-9.]*' | cut -d= -f2)
  end=$(date +%s.%N)
  echo "$line $(python3 -c "print(round($end - $start, 4))")"
}

# 1. Overhead, interleaved so that drifting clocks hit both modes alike.
printf 'mode\trun\tgenerate_s\tprocess_s\n' > "$out/timings.tsv"
for i in $(seq 1 "$runs"); do
  read -r g p <<< "$(wall "${workload[@]}")"
  printf 'untraced\t%s\t%s\t%s\n' "$i" "$g" "$p" >> "$out/timings.tsv"
  rm -rf "$work/t" && mkdir -p "$work/t"
  read -r g p <<< "$(wall env "${traced_env[@]}" "${workload[@]}")"
  printf 'traced\t%s\t%s\t%s\n' "$i" "$g" "$p" >> "$out/timings.tsv"
done
python3 - "$out/timings.tsv" <<'PY' | tee -a "$summary"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
for col in ("generate_s", "process_s"):
    med = {m: statistics.median(float(r[col]) for r in rows if r["mode"] == m and r[col]) for m in ("untraced", "traced")}
    print(f"{col}: untraced median {med['untraced']:.4f} s, traced median {med['traced']:.4f} s, "
          f"ratio {med['traced'] / med['untraced']:.3f} (bar: <= 1.10)")
PY

# 2 and 3. One traced run and one PyTorch-profiler run of the same program and steps.
rm -rf "$work/t" && mkdir -p "$work/t"
env "${traced_env[@]}" KERNLENS_TRACE_CHROME=1 "${workload[@]}" --warmup 0 >> "$out/tracer.stderr.log" 2>&1
"${workload[@]}" --warmup 0 --torch-trace "$work/torch.json" >> "$out/tracer.stderr.log" 2>&1
kltraces=("$work"/t/kernlens-*.kltrace)
say "kltrace files: ${#kltraces[@]} ($(ls -1 "$work"/t | tr '\n' ' '))"
kl_bytes=$(cat "${kltraces[@]}" | wc -c)
torch_bytes=$(wc -c < "$work/torch.json")
say "size: kltrace $kl_bytes bytes, PyTorch JSON $torch_bytes bytes, ratio $(python3 -c "print(round($torch_bytes / max($kl_bytes, 1), 1))")x (bar: >= 10x)"
"$kernlens" analyze "${kltraces[@]}" --format json -o "$out/tracer.analysis.json" 2>> "$out/tracer.stderr.log"
"$kernlens" analyze "$work/torch.json" --format json -o "$out/torch.analysis.json" 2>> "$out/tracer.stderr.log"
python3 - "$out/tracer.analysis.json" "$out/torch.analysis.json" <<'PY' | tee -a "$summary"
import json, sys
tr, pt = (json.load(open(p)) for p in sys.argv[1:3])
def row(label, a, b):
    diff = 100.0 * (a - b) / b if b else float("nan")
    print(f"{label:<34} tracer {a:>14,.0f}  torch {b:>14,.0f}  diff {diff:+.3f}%")
def stages(doc):
    return {s["name"]: s for s in doc["stages"]}
row("all kernels: launches", tr["totals"]["launches"], pt["totals"]["launches"])
row("all kernels: kernel_time_ns", tr["totals"].get("kernel_time_ns", 0), pt["totals"].get("kernel_time_ns", 0))
st, sp = stages(tr), stages(pt)
for name in ("prefill", "decode"):
    if name in st and name in sp:
        row(f"{name}: launches", st[name]["launches"], sp[name]["launches"])
        row(f"{name}: kernel_time_ns", st[name].get("kernel_time_ns", 0), sp[name].get("kernel_time_ns", 0))
    else:
        print(f"stage {name}: missing (tracer has {sorted(st)}, torch has {sorted(sp)})")
print("note: 'all kernels' of the tracer include kernels outside the profiled block (model setup); "
      "the stage rows are the like-for-like comparison")
PY
rm -rf "$work"
