#!/usr/bin/env bash
# Validates `kernlens profile` on a GPU machine (issue 6): profiles the example workload with
# ncu discovery and the deep pass, then runs ncu with the same sections over the whole NVTX
# range (the argv kernlens's own --dry-run prints, without its kernel filters), and writes
# both wall times, the deep pass's share of them and its coverage of kernel time.
#
#   scripts/device/profile_vs_ncu_baseline.sh OUTDIR MODEL [RANGE] [TIER]     (MODEL: llama, qwen, gpt2)
#
# Env: KERNLENS (default build/kernlens), PYTHON (python3), BASELINE=0 to skip the baseline
# (its figures from an earlier run stand), STAMPS=FILE to also append each phase's start and
# end time there (a run cut short still leaves them). Runs ncu with --clock-control none.
set -uo pipefail
out=$1
model=$2
range=${3:-prefill}
tier=${4:-roofline}
kernlens=${KERNLENS:-build/kernlens}
workload=("${PYTHON:-python3}" examples/workloads/llm_stages.py --model "$model" --decode-steps 2)
mkdir -p "$out"
now() { date +%s.%N; }

stamp() { echo "$1 $(now)" >> "$out/$model.stamps"; [[ -n ${STAMPS:-} ]] && echo "$1 $(now)" >> "$STAMPS"; }
stamp profile-start
t0=$(now)
"$kernlens" profile --discovery ncu --tier "$tier" --nvtx-include "$range" --out "$out/runs" --run-id "$model" \
  --tag model="$model" --tag batch=4 --tag tokens=256 --tag dtype=bf16 --quiet -- "${workload[@]}" > "$out/$model.report.txt" 2> "$out/$model.profile.err"
rc=$?
t1=$(now)
stamp profile-end
echo "kernlens profile exit code $rc" >> "$out/$model.profile.err"

# The baseline: the deep pass's argv, every kernel of the range instead of the chosen ones.
"$kernlens" profile --dry-run --discovery ncu --tier "$tier" --nvtx-include "$range" --out "$out/baseline" \
  --run-id "$model" -- "${workload[@]}" > "$out/$model.dryrun.txt"
mapfile -t baseline < <(python3 "$(dirname "$0")/baseline_argv.py" "$out/$model.dryrun.txt" "$out/$model.baseline")
printf '%q ' "${baseline[@]}" > "$out/$model.baseline_argv.txt"
t2=$(now)
stamp baseline-start
brc=skipped
if [[ ${BASELINE:-1} != 0 ]]; then
  "${baseline[@]}" > "$out/$model.baseline.log" 2>&1
  brc=$?
fi
t3=$(now)
stamp baseline-end

python3 - "$out" "$model" "$t0" "$t1" "$t2" "$t3" "$rc" "$brc" <<'PY' | tee "$out/$model.summary.txt"
import json, re, sys
out, model, t0, t1, t2, t3, rc, brc = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:7]), *sys.argv[7:9]
m = json.load(open(f"{out}/runs/{model}/manifest.json"))
deep = sum(v for k, v in m["step_wall_ns"].items() if k.startswith("deep")) / 1e9
disc = sum(v for k, v in m["step_wall_ns"].items() if k.startswith("discovery")) / 1e9
sel = m["options"]["selection"]
try:
    baseline_kernels = len(re.findall(r"==PROF== Profiling", open(f"{out}/{model}.baseline.log").read()))
except FileNotFoundError:
    baseline_kernels = 0
print(f"model {model}: kernlens profile exit {rc}, status {m['status']}")
print(f"  kernlens profile, whole command: {t1 - t0:.1f} s (discovery {disc:.1f} s, deep pass {deep:.1f} s)")
print(f"  deep pass: {sel['kernels']} kernels = {100 * sel['covered_ns'] / sel['total_kernel_ns']:.1f}% of kernel time, {sel['ncu_runs']} ncu runs")
if brc != "skipped":
    print(f"  ncu, same sections, whole range: {t3 - t2:.1f} s, {baseline_kernels} launches profiled (exit {brc})")
    print(f"  ratio baseline / kernlens deep pass: {(t3 - t2) / deep:.1f}x; baseline / whole kernlens command: {(t3 - t2) / (t1 - t0):.1f}x")
PY
