#!/usr/bin/env bash
# How long discovery's program lives after the tracer has written its trace (issue 15: the
# whole command waits for the process to end before selecting). Runs the unseen llama-like
# model (8 layers, batch 16, prompt 512, --phases) under the tracer, as discovery does, and
# polls for its kernlens-PID.kltrace every 5 ms: prints the seconds since the start at which
# each phase ended, the trace appeared, and the process ended. Twice, then one whole
# `kernlens profile` (--verbose) for its per-step timings. ncu runs with --clock-control none.
#   scripts/device/discovery_teardown_probe.sh OUT      (about 3 minutes; OUT/teardown.txt)
set -uo pipefail
out=${1:?usage: discovery_teardown_probe.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out"
work=$(mktemp -d)
log=$out/teardown.txt
workload=(python3 "$root/examples/workloads/unseen_llama.py" --batch 16 --prompt 512 --layers 8 --phases)
now() { date +%s.%N; }
{ echo "machine: $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >> "$log"

traced() {
  local name=$1 dir=$work/$1 t0 pid seen=""
  mkdir -p "$dir"
  t0=$(now)
  env CUDA_INJECTION64_PATH="$devrun/libkernlens_tracer.so" NVTX_INJECTION64_PATH="$devrun/libkernlens_tracer.so" \
    KERNLENS_TRACE_DIR="$dir" "${workload[@]}" > /dev/null 2> "$dir/stderr" &
  pid=$!
  while kill -0 "$pid" 2> /dev/null; do
    if [[ -z $seen && -f $dir/kernlens-$pid.kltrace ]]; then seen=$(now); fi
    sleep 0.005
  done
  wait "$pid"
  local rc=$? t1
  t1=$(now)
  [[ -z $seen && -f $dir/kernlens-$pid.kltrace ]] && seen=$t1
  echo "$name rc=$rc" >> "$log"
  awk -v t0="$t0" '/phase/ { print "  phase", $0 }' "$dir/stderr" >> "$log"
  awk -v t0="$t0" -v s="$seen" -v e="$t1" 'BEGIN { printf "  trace written at %.3f s, process ended at %.3f s: %.3f s after the trace\n", s - t0, e - t0, e - s }' >> "$log"
}

traced T1
traced T2
t0=$(now)
"$devrun/kernlens" profile --nvtx-include prefill --clock-control none --tier roofline -o "$work/runs" --run-id W1 -f \
  --verbose --quiet -- "${workload[@]}" > /dev/null 2> "$out/W1.profile.log"
echo "W1 rc=$? wall_s=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')" >> "$log"
grep 'phase' "$work/runs/W1/discovery/tracer.stderr.log" | sed 's/^/  W1 discovery /' >> "$log"
for f in "$work"/runs/W1/deep/*program*.stderr.log; do grep phase "$f" | sed "s|^|  W1 $(basename "$f") |" >> "$log"; done
sed -n '/where the time went/,$p' "$out/W1.profile.log" | sed 's/^/  W1 /' >> "$log"
cp "$work/runs/W1/manifest.json" "$out/W1.manifest.json" 2>/dev/null
cat "$log"
