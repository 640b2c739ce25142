#!/usr/bin/env bash
# Issue 20 on the GPU machine: a small real sweep (scripts/device/sweep_small.toml: llama, qwen
# and gpt2 at batch 1 and 8, prefill, tracer discovery, quick tier, --clock-control none) run
# with `kernlens sweep submit --local`, then status, ingest into one database, the cross-model
# views and the page. Uses build/devrun (scripts/device/make_devrun.sh); builds nothing.
#   scripts/device/sweep_small.sh OUT
# Writes under OUT: sweep_small.db (the fixture for the cross-model report) and export/*.csv,
# plan.txt, submit.txt, status.txt, ingest.txt, class_scaling.txt, across.html, checks.txt, and
# sweep_small_runs.tgz (the run directories without their .ncu-rep files).
set -u
out=${1:?usage: sweep_small.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
kernlens=$devrun/kernlens
spec=$root/scripts/device/sweep_small.toml
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out"
rm -rf "$root/build/sweep_small"
start=$(date +%s)
"$kernlens" sweep plan "$spec" > "$out/plan.txt" 2>&1
timeout "${SWEEP_TIMEOUT_S:-420}" "$kernlens" sweep submit --local "$spec" > "$out/submit.txt" 2>&1
echo "submit rc=$? after $(($(date +%s) - start)) s" >> "$out/submit.txt"
"$kernlens" sweep status "$spec" > "$out/status.txt" 2>&1
"$kernlens" sweep ingest "$spec" --db "$out/sweep_small.db" > "$out/ingest.txt" 2>&1
echo "ingest rc=$?" >> "$out/ingest.txt"
"$kernlens" db export --db "$out/sweep_small.db" --format csv --out "$out/export" > /dev/null
"$kernlens" db query --db "$out/sweep_small.db" --view class-scaling > "$out/class_scaling.txt" 2>&1
"$kernlens" report --db "$out/sweep_small.db" -o "$out/across.html" 2>> "$out/class_scaling.txt"
{
  # ncu finds nothing to measure when a filter matches no kernel: it says so and exits 0.
  echo "ncu 'No kernels were profiled' in: $(grep -rl 'No kernels were profiled' "$root/build/sweep_small" \
    --include='*.log' | sed "s|$root/build/sweep_small/||" | tr '\n' ' ')"
  echo "points done: $(grep -c ' done ' "$out/status.txt") of 6"
  echo "wall: $(($(date +%s) - start)) s"
} > "$out/checks.txt"
# Readers leave an empty write-ahead log beside the database; sweep ingest checkpointed it all.
for f in "$out/sweep_small.db-wal" "$out/sweep_small.db-shm"; do [[ -s $out/sweep_small.db-wal ]] || rm -f "$f"; done
find "$root/build/sweep_small" -name '*.ncu-rep' -delete
tar czf "$out/sweep_small_runs.tgz" -C "$root/build" sweep_small
cat "$out/status.txt" "$out/checks.txt"
