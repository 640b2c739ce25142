#!/usr/bin/env bash
# Issue 7 on the GPU machine: the CUPTI tracer's overhead, size and accuracy on the example
# workload's decode-heavy run. Builds nothing: it uses the outputs copied into build/devrun/
# (kernlens, libkernlens_tracer.so and the libcupti.so.* it was linked with; libraries in
# build/devrun/lib/).
#   scripts/device/tracer_validation.sh OUT [ROUNDS]      (default 3)
# Writes into OUT: summary.txt (every figure below), timings.tsv, tracer.analysis.json,
# torch.analysis.json, tracer.stderr.log, env.txt.
#  1. Overhead, in one process: the workload's --alternate-capture runs ROUNDS*4 pairs of
#     generate() calls, one inside cudaProfilerStart/Stop and one outside, in ABBA order, under
#     the tracer with KERNLENS_TRACE_CAPTURE=cudaProfilerApi (it traces the inside calls only),
#     and prints the median per-pair decode-time ratio (bar: <= 1.10). The same program without
#     the tracer gives the method's noise floor (ratio about 1). Then ROUNDS rounds of whole
#     processes, untraced and traced, for what a paused tracer might still cost (this shared
#     machine varies by tens of percent between processes: see BENCHMARKS.md).
#  2. The .kltrace size against the PyTorch profiler's JSON of the same run (bar: >= 10x smaller).
#  3. Kernel count and kernel time per stage (prefill, decode) from `kernlens analyze --format
#     json` of both traces, and the % difference (bar: within 1%). The traced run here sets only
#     CUDA_INJECTION64_PATH, so the tracer itself must point NVTX at itself.
set -uo pipefail
out=${1:?usage: tracer_validation.sh OUT [ROUNDS]}
rounds=${2:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
kernlens=$devrun/kernlens
tracer=$devrun/libkernlens_tracer.so
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=$(mktemp -d)
mkdir -p "$out"
summary=$out/summary.txt
workload=(python3 "$root/examples/workloads/llm_stages.py" --model llama --batch 1 --prompt 128 --decode-steps 64)
say() { echo "$*" | tee -a "$summary"; }
: > "$summary"
[[ -x $kernlens && -f $tracer ]] || { say "missing build/devrun/kernlens or libkernlens_tracer.so"; exit 2; }
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  ldd "$tracer"
} > "$out/env.txt" 2>&1

# 1. Overhead.
traced=(CUDA_INJECTION64_PATH="$tracer" NVTX_INJECTION64_PATH="$tracer" KERNLENS_TRACE_DIR="$work/t")
pairs=$((rounds * 4))
for mode in traced-in-process untraced-in-process traced-in-process; do
  rm -rf "$work/t" && mkdir -p "$work/t"
  if [[ $mode == traced-in-process ]]; then set -- "${traced[@]}" KERNLENS_TRACE_CAPTURE=cudaProfilerApi; else set -- KERNLENS_UNTRACED=1; fi
  line=$(env "$@" "${workload[@]}" --warmup 2 --repeat "$pairs" --alternate-capture 2>> "$out/tracer.stderr.log" | grep '^llm_stages')
  say "$mode: ${line#llm_stages: }"
  if [[ $mode == traced-in-process ]]; then  # only the captured half may be in the trace
    "$kernlens" analyze "$work"/t/kernlens-*.kltrace --format json 2>> "$out/tracer.stderr.log" |
      python3 -c "import json,sys; d=json.load(sys.stdin); print('  traced launches', d['totals']['launches'], \
        'in', {s['name']: s['launches'] for s in d['stages']}, '(expected $pairs x 22,742)')" | tee -a "$summary"
  fi
done
printf 'round\tmode\tgenerate_s\tprefill_s\tdecode_s\n' > "$out/timings.tsv"
timed() {  # round, mode, env assignments...
  local round=$1 mode=$2 line
  shift 2
  rm -rf "$work/t" && mkdir -p "$work/t"
  line=$(env "$@" "${workload[@]}" --warmup 2 --repeat 10 2>> "$out/tracer.stderr.log" | grep '^llm_stages')
  printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$mode" "$(grep -o 'wall_s=[0-9.]*' <<< "$line" | cut -d= -f2)" \
    "$(grep -o 'prefill_s=[0-9.]*' <<< "$line" | cut -d= -f2)" "$(grep -o 'decode_s=[0-9.]*' <<< "$line" | cut -d= -f2)" \
    >> "$out/timings.tsv"
}
for i in $(seq 1 "$rounds"); do
  timed "$i" untraced KERNLENS_UNTRACED=1
  timed "$i" traced "${traced[@]}"
done
python3 - "$out/timings.tsv" <<'PY' | tee -a "$summary"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = {(r["round"], r["mode"]): r for r in rows}
for col in ("decode_s", "generate_s"):
    ratios = [float(by[(r, "traced")][col]) / float(by[(r, "untraced")][col])
              for r in sorted({r["round"] for r in rows}) if (r, "traced") in by and (r, "untraced") in by
              and by[(r, "traced")][col] and by[(r, "untraced")][col]]
    if ratios:
        print(f"whole processes, traced / untraced, {col:<10}: per-round ratios "
              f"{', '.join(f'{x:.3f}' for x in ratios)}; median {statistics.median(ratios):.3f}")
PY

# 2 and 3. One traced run and one PyTorch-profiler run of the same program and steps.
rm -rf "$work/t" && mkdir -p "$work/t"
env CUDA_INJECTION64_PATH="$tracer" KERNLENS_TRACE_DIR="$work/t" KERNLENS_TRACE_CHROME=1 "${workload[@]}" --warmup 0 \
  >> "$out/tracer.stderr.log" 2>&1
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
grep -h 'kernlens' "$out/tracer.stderr.log" | sort | uniq -c | head -20 | tee -a "$summary"
rm -rf "$work"
