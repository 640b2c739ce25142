#!/usr/bin/env bash
# Issue 15's cost targets on the GPU machine, in one sitting: what the whole `kernlens profile`
# costs, step by step, against the usual baseline (ncu with the same sections over every launch
# of the NVTX range), on an unseen llama-like model (examples/workloads/unseen_llama.py: hidden
# 2048, batch 16, prompt 512, 4 and 8 layers). Builds nothing: it uses build/devrun/kernlens and
# build/devrun/libkernlens_tracer.so (as scripts/device/tracer_e2e.sh). ncu always runs with
# --clock-control none.
#
#   scripts/device/profile_cost.sh OUT [all|ours|baseline|partial|summary]   (default all: one device call;
#                                  partial: only the 8-layer baseline's first launches)
#   CHECKPOINT=1 scripts/device/profile_cost.sh OUT ...   the weights loaded from a checkpoint
#   EARLY_PROGRAMS=N scripts/device/profile_cost.sh OUT ours   kernlens with --early-programs N
#
# Measured, in this order:
#   1. kernlens profile on the 4-layer and the 8-layer model, as a user types it (discovery auto:
#      the tracer), each run's timings from its manifest;
#   2. the baseline on the 4-layer model: the deep pass's own ncu argv (from --dry-run) without
#      its kernel filters, --kill and -o, every output line timestamped;
#   3. the baseline's first 24 launches on the 8-layer model (--launch-count 24), timestamped:
#      the 8-layer model's start-up and the per-launch cost in the same sitting.
# Derived (not measured): the 8-layer baseline = its start-up to the first profiled launch (3.)
# + the prefill launches of the 8-layer model (kernlens's discovery, 1.) x the per-launch cost
# (2.) + what followed the last launch in the 4-layer baseline (2.). The same formula applied to
# the 4-layer model, against its measured baseline, says how far to trust it.
# Writes OUT/summary.txt (the table), OUT/*.log, each run's manifest and analysis
# (OUT/L4.manifest.json, ...) and OUT/profile_cost.tar.gz (the run directories, reports over
# 4 MB left out). About 7-8 minutes of device time. To stay under a 10-minute call, `ours`
# (about 2 min) and `baseline` (about 5.5 min) split it into two calls on the same machine;
# copy both OUT folders' files into one and `summary` (no GPU) makes the table from them.
# The device tool returns at most 8 files from $OUT, fewer than this writes: run it as
#   scripts/device/profile_cost.sh /tmp/A ours; tar czf $OUT/A.tgz -C /tmp A
set -uo pipefail
out=${1:?usage: profile_cost.sh OUT [all|ours|baseline|partial|summary]}
phase=${2:-all}
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
kernlens=$devrun/kernlens
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out"
work=$(mktemp -d)  # run directories and reports: only what is small comes back in OUT
workload=(python3 "$root/examples/workloads/unseen_llama.py" --batch 16 --prompt 512)
# CHECKPOINT=1: the weights are loaded from a checkpoint (written first, untimed) instead of
# built on the CPU (30-45 s for 8 layers on the H100 machine): a program's start-up as a script
# that serves a model has it. The baseline loads the same checkpoint.
if [[ ${CHECKPOINT:-0} == 1 ]]; then
  workload+=(--checkpoint "$work/checkpoints")
fi
partial_launches=24
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
# Prefixes every line with the seconds since $1 (ncu ends a kernel's progress line when its
# replay is done, so a "Profiling" line's stamp is when that launch finished).
stamp_lines() {
  python3 -u -c '
import sys, time
t0 = float(sys.argv[1])
for line in sys.stdin:
    sys.stdout.write(f"{time.time() - t0:9.3f} {line}")
    sys.stdout.flush()' "$1"
}


ours() {
  local layers=$1 t0 rc
  t0=$(now)
  timeout 300 "$kernlens" profile --nvtx-include prefill --clock-control none --tier roofline -o "$work/runs" \
    --run-id "L$layers" -f --tag layers="$layers" --tag batch=16 --tag prompt_tokens=512 --verbose --quiet \
    ${EARLY_PROGRAMS:+--early-programs "$EARLY_PROGRAMS"} -- \
    "${workload[@]}" --layers "$layers" > "$out/L$layers.report.txt" 2> "$out/L$layers.profile.log"
  rc=$?
  echo "L$layers kernlens_rc=$rc wall_s=$(since "$t0")" >> "$out/walls.txt"
  cp "$work/runs/L$layers/manifest.json" "$out/L$layers.manifest.json" 2>/dev/null
  cp "$work/runs/L$layers/analysis.json" "$out/L$layers.analysis.json" 2>/dev/null
}

# The deep pass's own ncu argv without its kernel filters, --kill and -o: every launch of the range.
baseline_argv() {
  local layers=$1 report=$2
  "$kernlens" profile --dry-run --no-early-start --discovery ncu --tier roofline --nvtx-include prefill --clock-control none \
    -o "$work/dry" --run-id "L$layers" -- "${workload[@]}" --layers "$layers" > "$out/L$layers.dryrun.txt"
  python3 "$root/scripts/device/baseline_argv.py" "$out/L$layers.dryrun.txt" "$report"
}

baseline() {
  local layers=$1 limit=$2 name=$3 extra=() t0 rc
  mapfile -t argv < <(baseline_argv "$layers" "$work/$name")
  if [[ -n $limit ]]; then
    local at
    for at in "${!argv[@]}"; do [[ ${argv[$at]} == -o ]] && break; done
    argv=("${argv[@]:0:$at}" --launch-count "$limit" "${argv[@]:$at}")
  fi
  printf '%q ' "${argv[@]}" > "$out/$name.argv.txt"
  t0=$(now)
  timeout 480 "${argv[@]}" 2>&1 | stamp_lines "$t0" > "$out/$name.log"
  rc=${PIPESTATUS[0]}
  echo "$name ncu_rc=$rc wall_s=$(since "$t0")" >> "$out/walls.txt"
}

if [[ $phase != summary ]]; then
  {
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
    ncu --version | tail -1
    python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
    git -C "$root" log -1 --format='commit %H' 2>/dev/null
    echo "workload: ${workload[*]}"
  } > "$out/machine.$phase.txt" 2>&1
  if [[ ${CHECKPOINT:-0} == 1 ]]; then
    for layers in 4 8; do "${workload[@]}" --layers "$layers" --save-checkpoint >> "$out/checkpoints.log" 2>&1; done
  fi
fi
if [[ $phase == all || $phase == ours ]]; then
  ours 4
  ours 8
fi
if [[ $phase == all || $phase == baseline ]]; then
  baseline 4 "" baseline_L4
fi
if [[ $phase == all || $phase == baseline || $phase == partial ]]; then
  baseline 8 "$partial_launches" baseline_L8_first$partial_launches
fi

python3 - "$out" "$partial_launches" <<'PY' | tee "$out/summary.txt"
import glob, json, os, re, sys
out, partial = sys.argv[1], int(sys.argv[2])
walls = {}
for line in open(os.path.join(out, "walls.txt")) if os.path.exists(os.path.join(out, "walls.txt")) else []:
    name, *fields = line.split()
    walls[name] = dict(f.split("=") for f in fields)

def ours(layers):
    manifest, analysis = (os.path.join(out, f"L{layers}.{name}.json") for name in ("manifest", "analysis"))
    if not os.path.exists(manifest):
        return None
    m = json.load(open(manifest))
    a = json.load(open(analysis)) if os.path.exists(analysis) else {}
    steps = m["timings"]["steps"]
    s = lambda pred: sum(t["wall_ns"] for t in steps if pred(t["step"])) / 1e9
    deep_runs = [r for r in m["runs"] if re.fullmatch(r"deep \d+/\d+", r["step"])]
    return {
        "status": m["status"], "wall": float(walls.get(f"L{layers}", {}).get("wall_s", "nan")),
        "total": m["timings"]["total_ns"] / 1e9,
        "discovery": s(lambda n: n.startswith("discovery")), "method": m["discovery"].get("method"),
        "deep": s(lambda n: re.fullmatch(r"deep \d+/\d+", n) is not None),
        "exports": s(lambda n: n.startswith("deep") and "export" in n),
        "own": s(lambda n: not n.startswith("deep") and not n.startswith("discovery")),
        "runs": len(deep_runs), "kernels": m["options"].get("selection", {}).get("kernels"),
        "first_kernel": [r.get("first_kernel_ns", 0) / 1e9 for r in deep_runs],
        "launches": a.get("totals", {}).get("launches"),
        "coverage": a.get("coverage", {}).get("measured_kernels_time"),
        "steps": [(t["step"], t["wall_ns"] / 1e9) for t in steps],
    }

def baseline(name):
    path = os.path.join(out, f"{name}.log")
    if not os.path.exists(path):
        return None
    text = open(path).read()
    stamps = [float(l.split()[0]) for l in text.splitlines() if "==PROF== Profiling" in l and "passes" in l]
    return {"wall": float(walls.get(name, {}).get("wall_s", "nan")), "n": len(stamps),
            "first": stamps[0] if stamps else None, "last": stamps[-1] if stamps else None,
            "per_launch": (stamps[-1] - stamps[0]) / (len(stamps) - 1) if len(stamps) > 1 else None,
            "no_kernels": "No kernels were profiled" in text}

o4, o8 = ours(4), ours(8)
b4, b8 = baseline("baseline_L4"), baseline(f"baseline_L8_first{partial}")
for machine in sorted(glob.glob(os.path.join(out, "machine.*.txt"))):
    print(f"{os.path.basename(machine)}: " + open(machine).read().strip().replace("\n", "; "))
for layers, o in ((4, o4), (8, o8)):
    if not o:
        print(f"L{layers}: no kernlens run directory"); continue
    print(f"\nkernlens profile, {layers} layers: {o['status']}, whole command {o['wall']:.1f} s (manifest total {o['total']:.1f} s)")
    print(f"  discovery ({o['method']}) {o['discovery']:.1f} s; deep pass {o['deep']:.1f} s in {o['runs']} ncu run(s), "
          f"{o['kernels']} kernels, start-up to the first profiled kernel {', '.join(f'{x:.1f} s' for x in o['first_kernel'])}; "
          f"exports {o['exports']:.1f} s; kernlens's own steps {o['own']:.1f} s")
    print(f"  prefill launches {o['launches']}, measured kernels' share of kernel time {o['coverage']}")
    log = os.path.join(out, f"L{layers}.profile.log")
    if os.path.exists(log) and "ncu profiled no kernels" in open(log).read():
        print(f"  ncu profiled no kernels in a run: see L{layers}.profile.log")
    print("  steps: " + "; ".join(f"{n} {t:.2f} s" for n, t in o["steps"]))
if b4:
    print(f"\nbaseline, 4 layers (measured): {b4['wall']:.1f} s, {b4['n']} launches profiled "
          f"(first at {b4['first']} s, last at {b4['last']} s, {b4['per_launch'] and round(b4['per_launch'], 3)} s a launch)"
          f"{'; ncu said No kernels were profiled' if b4['no_kernels'] else ''}")
    if o4 and o4["deep"] > 0:
        print(f"  4 layers, measured: baseline / deep pass = {b4['wall'] / o4['deep']:.1f}x; baseline / whole command = {b4['wall'] / o4['wall']:.1f}x")
if b8:
    print(f"baseline, 8 layers, first {partial} launches (measured): {b8['wall']:.1f} s, {b8['n']} profiled, first at "
          f"{b8['first']} s, {b8['per_launch'] and round(b8['per_launch'], 3)} s a launch")
if b4 and b8 and o4 and o8 and b4["per_launch"] and b8["first"] is not None and o4["launches"] and o8["launches"] and o8["deep"] > 0:
    tail = b4["wall"] - b4["last"]
    c = b4["per_launch"]
    check4 = b4["first"] + (o4["launches"] - 1) * c + tail
    derived8 = b8["first"] + (o8["launches"] - 1) * c + tail
    print(f"\nderived (not measured): baseline = start-up to the first launch + (launches - 1) x {c:.3f} s + {tail:.1f} s after the last")
    print(f"  check on 4 layers: derived {check4:.1f} s vs measured {b4['wall']:.1f} s ({100 * (check4 / b4['wall'] - 1):+.1f}%)")
    print(f"  8 layers: derived baseline {derived8:.1f} s ({o8['launches']} launches); baseline / deep pass = "
          f"{derived8 / o8['deep']:.1f}x; baseline / whole command = {derived8 / o8['wall']:.1f}x")
PY

if [[ $phase != summary ]]; then
  find "$work" -name "*.ncu-rep" -size +4M -delete
  tar -C "$work" --exclude=./checkpoints -czf "$out/profile_cost.$phase.tar.gz" .
fi
rm -rf "$work"
