#!/usr/bin/env bash
# Issue 14's ground truth on the GPU machine: kernlens's measured FLOPs and MFU per stage
# against the analytic FLOPs of models built from transformers configs (random weights, no
# download): a dense GQA model (Mistral family, SDPA), a Mixtral-like MoE (8 experts, top-2)
# and a Qwen2 model on the eager attention path (examples/workloads/ground_truth.py).
# Builds nothing: it uses build/devrun/kernlens and libkernlens_tracer.so (libraries in
# build/devrun/lib/), as the other device scripts do.
#   scripts/device/ground_truth.sh OUT [MODEL...]     (default: dense_gqa moe eager)
# About 1.5 to 3 minutes a model on an H100 (two program start-ups each: the tracer's run and
# ncu's); give the models to separate device calls if one call's time limit is near.
# For each model: one `kernlens profile --discovery tracer --clock-control none --tier roofline`
# (the tracer times every launch; ncu measures the hottest kernels, one launch each), then
# `kernlens analyze` with the config.json transformers wrote. Writes into OUT:
#   summary.txt      the table (model x stage: analytic, measured, measured/analytic, MFU), the
#                    workload's own analytic count beside kernlens's, and every kernel above 1%
#                    of a run's time that is library user or op class other
#   ground_truth.tgz the run directories (without .ncu-rep), configs, analyses (json and text)
# What it should show: prefill measured/analytic within 0.90-1.10 for dense_gqa and eager (eager
# computes the full P x P attention scores: its ratio sits a little above the dense one) and
# 0.85-1.15 for moe; no kernel above 1% of a run's time is user or other.
set -uo pipefail
out=${1:?usage: ground_truth.sh OUT [MODEL...]}
shift
models=("${@:-dense_gqa moe eager}")
read -r -a models <<< "${models[*]}"
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
kernlens=$devrun/kernlens
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out"
summary=$out/summary.txt
: > "$summary"
[[ -x $kernlens && -f $devrun/libkernlens_tracer.so ]] || { echo "missing build/devrun/kernlens or libkernlens_tracer.so" | tee -a "$summary"; exit 2; }
work=$(mktemp -d)
mkdir -p "$work/runs" "$work/configs" "$work/analyses"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  ncu --version | tail -1
  python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
} > "$work/env.txt" 2>&1
cat "$work/env.txt" >> "$summary"

decode_steps=4
for model in "${models[@]}"; do
  workload=(python3 "$root/examples/workloads/ground_truth.py" --model "$model" --decode-steps "$decode_steps"
            --warmup 1 --write-config "$work/configs/$model.json")
  # The sizes and the workload's own analytic count (Python), without the GPU.
  "${workload[@]}" --analytic-only > "$work/analyses/$model.workload.txt" 2>&1
  start=$(date +%s)
  timeout 190 "$kernlens" profile --discovery tracer --clock-control none --tier roofline --top 16 \
    --coverage 0.97 --quiet --out "$work/runs" --run-id "$model" -- "${workload[@]}" \
    > "$work/analyses/$model.profile.txt" 2>&1
  rc=$?
  echo "$model: profile exit $rc in $(( $(date +%s) - start )) s" | tee -a "$summary"
  if grep -rqs "No kernels were profiled" "$work/runs/$model"; then
    echo "$model: ncu says No kernels were profiled" | tee -a "$summary"
  fi
  read -r batch prompt < <(python3 -c 'import json,sys; d=json.loads(sys.stdin.read().split("ground_truth: ",1)[1]); print(d["batch"], d["prompt_tokens"])' < "$work/analyses/$model.workload.txt")
  args=("$work/runs/$model" --model-config "$work/configs/$model.json" --batch "$batch" --prompt-tokens "$prompt"
        --decode-steps "$decode_steps")
  "$kernlens" analyze "${args[@]}" --format json -o "$work/analyses/$model.analysis.json" 2>> "$work/analyses/$model.profile.txt"
  "$kernlens" analyze "${args[@]}" --top 25 > "$work/analyses/$model.analysis.txt" 2>&1
done

python3 - "$work" "${models[@]}" >> "$summary" <<'PY'
import json, pathlib, sys
work, models = pathlib.Path(sys.argv[1]), sys.argv[2:]
def si(v):
    return "-" if v is None else f"{v / 1e12:.3f} T"
def pct(v):
    return "-" if v is None else f"{100 * v:.1f}%"
print("\n| model | stage | analytic FLOP (workload) | analytic FLOP (kernlens) | measured FLOP (known .. at most) | measured / analytic | MFU measured | MFU analytic |")
print("|---|---|---|---|---|---|---|---|")
misfiled = []
for model in models:
    path = work / "analyses" / f"{model}.analysis.json"
    wl = json.loads((work / "analyses" / f"{model}.workload.txt").read_text().split("ground_truth: ", 1)[1].splitlines()[0])
    if not path.exists():
        print(f"| {model} | (no analysis) | | | | | | |")
        continue
    doc = json.loads(path.read_text())
    for s in doc["stages"]:
        label = s["name"].rsplit("/", 1)[-1]
        own = {"prefill": wl["analytic_prefill_flops"], "decode": wl["analytic_decode_flops"]}.get(label)
        own = own * wl["runs"] if own is not None else None
        high = s.get("flops_high")
        measured = f"{si(s.get('flops'))} .. {si(high) if high is not None else 'unbounded'}"
        ratio = "-" if s.get("flops_ratio") is None else f"{s['flops_ratio']:.3f}" + (
            f"-{s['flops_ratio_high']:.3f}" if s.get("flops_ratio_high") is not None else "+")
        print(f"| {model} | {s['name']} | {si(own)} | {si(s.get('analytic_flops'))} | {measured} | {ratio} | "
              f"{pct(s.get('mfu'))} | {pct(s.get('analytic_mfu'))} |")
    for k in doc["kernels"]:
        if k.get("share", 0) > 0.01 and (k["library"] == "user" or k["op_class"] == "other"):
            misfiled.append(f"{model}: {k['share']:.1%} {k['library']}/{k['op_class']} {k['base_name']}")
print("\nkernels above 1% of a run's time that are user or other:", len(misfiled))
for line in misfiled:
    print("  " + line)
PY

find "$work/runs" -name "*.ncu-rep" -delete
tar -C "$work" -czf "$out/ground_truth.tgz" runs configs analyses env.txt
cat "$summary"
rm -rf "$work"
