#!/usr/bin/env bash
# Where discovery's time goes on the GPU machine (issue 15: the whole command is discovery plus
# ~16 s). Runs the unseen llama-like model (8 layers, batch 16, prompt 512) with --phases, which
# prints when each of its steps ended (seconds since the process started):
#   1. alone, twice (the program's own start-up, GPU work and teardown);
#   2. two copies at once (what a second start-up beside it costs: the early start's situation);
#   3. under the tracer, as discovery (--discovery tracer --discovery-only), twice;
#   4. the whole `kernlens profile` as a user types it (discovery beside the early program).
# Builds nothing: build/devrun (scripts/device/make_devrun.sh). ncu runs with --clock-control none.
#   scripts/device/discovery_phases.sh OUT          (about 4-5 minutes; OUT/phases.txt)
set -uo pipefail
out=${1:?usage: discovery_phases.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
kernlens=$devrun/kernlens
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out"
work=$(mktemp -d)
workload=(python3 "$root/examples/workloads/unseen_llama.py" --batch 16 --prompt 512 --layers 8 --phases)
log=$out/phases.txt
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
{ echo "machine: $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >> "$log"

bare() {
  local name=$1 t0
  t0=$(now)
  "${workload[@]}" > "$out/$name.stdout" 2> "$out/$name.stderr"
  echo "$name rc=$? wall_s=$(since "$t0")" >> "$log"
  grep 'phase' "$out/$name.stderr" | sed "s/^/  $name /" >> "$log"
}

discovery_only() {
  local name=$1 t0
  t0=$(now)
  "$kernlens" profile --discovery tracer --discovery-only --nvtx-include prefill -o "$work/runs" --run-id "$name" -f \
    --verbose --quiet -- "${workload[@]}" > /dev/null 2> "$out/$name.profile.log"
  echo "$name rc=$? wall_s=$(since "$t0")" >> "$log"
  grep 'phase' "$work/runs/$name/discovery/tracer.stderr.log" | sed "s/^/  $name discovery /" >> "$log"
  grep -E '^  (discovery|find|probe)' "$out/$name.profile.log" | sed "s/^/  $name /" >> "$log"
}

whole() {
  local name=$1 t0
  shift
  t0=$(now)
  "$kernlens" profile --nvtx-include prefill --clock-control none --tier roofline -o "$work/runs" --run-id "$name" -f \
    --verbose --quiet "$@" -- "${workload[@]}" > /dev/null 2> "$out/$name.profile.log"
  echo "$name rc=$? wall_s=$(since "$t0")" >> "$log"
  grep 'phase' "$work/runs/$name/discovery/tracer.stderr.log" | sed "s/^/  $name discovery /" >> "$log"
  grep 'phase' "$work/runs/$name/deep/deep_1_program.stderr.log" 2>/dev/null | sed "s/^/  $name early program /" >> "$log"
  sed -n '/where the time went/,$p' "$out/$name.profile.log" | sed "s/^/  $name /" >> "$log"
  cp "$work/runs/$name/manifest.json" "$out/$name.manifest.json" 2>/dev/null
}

bare A1
discovery_only D1
( "${workload[@]}" > "$out/P1.stdout" 2> "$out/P1.stderr"; echo "P1 rc=$?" >> "$log" ) &
t0=$(now)
"${workload[@]}" > "$out/P2.stdout" 2> "$out/P2.stderr"; echo "P2 rc=$? wall_s=$(since "$t0")" >> "$log"
wait
echo "pair both done wall_s=$(since "$t0")" >> "$log"
grep phase "$out/P1.stderr" | sed 's/^/  P1 /' >> "$log"
grep phase "$out/P2.stderr" | sed 's/^/  P2 /' >> "$log"
whole F1
discovery_only D2
bare A2
tar czf "$out/phases_runs.tar.gz" -C "$work" runs 2>/dev/null
rm -f "$out"/*.stdout
cat "$log"
