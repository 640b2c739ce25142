#!/usr/bin/env bash
# Issue 7 end to end on the GPU machine, with the outputs copied into build/devrun/ (see
# tracer_validation.sh): CTest's tracer_on_gpu check, then `kernlens profile --discovery tracer`
# over a short decode run (the tracer for discovery, ncu for the 3 hottest kernels).
#   scripts/device/tracer_e2e.sh OUT
# Writes OUT/tracer_on_gpu.log, OUT/profile.log and OUT/tracer_e2e_run.tgz (the run directory).
set -u
out=${1:?usage: tracer_e2e.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$out"
bash "$root/tests/tracer/tracer_on_gpu.sh" "$devrun/kernlens" "$devrun/libkernlens_tracer.so" > "$out/tracer_on_gpu.log" 2>&1
echo "tracer_on_gpu rc=$?" >> "$out/tracer_on_gpu.log"
runs=$(mktemp -d)
timeout 240 "$devrun/kernlens" profile --discovery tracer --top 3 --tier quick --clock-control none --quiet \
  --out "$runs" --run-id tracer_e2e --tag model=llama --tag batch=1 --tag tokens=128 --tag dtype=bf16 -- python3 "$root/examples/workloads/llm_stages.py" --model llama --batch 1 \
  --prompt 128 --decode-steps 8 --warmup 0 > "$out/profile.log" 2>&1
echo "profile rc=$?" >> "$out/profile.log"
tar czf "$out/tracer_e2e_run.tgz" -C "$runs" tracer_e2e
rm -rf "$runs"
