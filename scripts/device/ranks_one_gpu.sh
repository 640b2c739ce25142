#!/usr/bin/env bash
# `kernlens profile --ranks` under torchrun on a one-GPU machine (issue 24, issue 17 item 5):
# examples/workloads/tp_stages.py as 2 tensor-parallel ranks sharing the GPU (gloo: NCCL refuses
# two ranks on one device), the command line `kernlens profile --help` documents:
#   1. --ranks 0    rank 0 profiled, rank 1 runs its program untouched in step; default
#                   deep-run timeout (max(60 s, 5x discovery) + 10 s per kernel)
#   2. --ranks all  both ranks profiled (two ncu instances on one GPU: see what ncu says),
#                   --deep-timeout 60
# Each under `timeout` so the whole script stays under 4 minutes even if kernlens hangs; the
# exit code, the wall time, each rank's program runs and the job's manifest go to OUT/log.txt;
# the run directories to OUT/ranks_runs.tgz.
# Uses build/devrun (scripts/device/make_devrun.sh). Env: TOP (kernlens --top, default 3; the
# two-GPU run takes 20, kernlens's default, for the coverage issue 24 asks).
#   scripts/device/ranks_one_gpu.sh OUT
set -u
out=${1:?usage: ranks_one_gpu.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_NVLS_ENABLE=0
work=$(mktemp -d)
mkdir -p "$out" "$work/runs"
log=$out/log.txt
: > "$log"
workload=(python3 "$root/examples/workloads/tp_stages.py" --layers 2 --batch 4 --prompt 128 --decode-steps 4)
step() { echo "== $* ($(date +%T))" >> "$log"; }

profile() {  # RUN_ID LIMIT_S KERNLENS_OPTIONS...
  local id=$1 limit=$2
  shift 2
  step "torchrun --nproc-per-node 2 --no-python kernlens profile $* ($id)"
  local start=$(date +%s)
  timeout "$limit" torchrun --nproc-per-node 2 --no-python "$devrun/kernlens" profile "$@" --discovery tracer \
    --top "${TOP:-3}" --tier quick --clock-control none --nvtx-include prefill --out "$work/runs" --run-id "$id" \
    -- "${workload[@]}" >> "$log" 2>&1
  echo "rc=$? wall_s=$(( $(date +%s) - start ))" >> "$log"
  echo "-- the job's manifest" >> "$log"
  cat "$work/runs/$id/manifest.json" >> "$log" 2>/dev/null || echo "(none)" >> "$log"
  for m in "$work/runs/$id"/rank-*/manifest.json; do
    [ -e "$m" ] || continue
    echo "-- $(basename "$(dirname "$m")"): status and runs" >> "$log"
    python3 - "$m" >> "$log" 2>&1 <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(m["status"], m.get("status_reason", ""))
print("selection:", json.dumps(m["options"].get("selection", {})))
for r in m["runs"]:
    print(f'  {r["step"]}: exit {r["exit_code"]}, {r["wall_ns"] / 1e9:.1f} s, kernels {r.get("kernels_profiled", 0)}')
PY
  done
  if grep -l "No kernels were profiled" "$work/runs/$id"/rank-*/deep/*.log >> "$log" 2>/dev/null; then
    echo "ncu: No kernels were profiled (in the files above)" >> "$log"
  fi
  ls -a "$work/runs" >> "$log"  # .kernlens-ranks is gone when the job ended cleanly
}

profile tp_rank0 115 --ranks 0
profile tp_all 100 --ranks all --deep-timeout 60

tar czf "$out/ranks_runs.tgz" -C "$work" runs
rm -rf "$work"
