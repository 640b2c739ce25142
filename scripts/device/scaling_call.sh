#!/usr/bin/env bash
# Issue 22's measurements on the GPU machine in one command, for one device call: SQLite alone
# reading the export's kernel table in 16 rowid ranges of one file, as kernlens's threads do, on
# 16 threads and in 16 processes (threads_or_processes_probe ranges), the builds side by side
# at 16 threads (compare_reader_builds.sh), the curve with each step's own CPU against 16
# one-thread processes (step_cpu.sh, step_cpu_table.py), and the busy-CPU timeline at 16
# threads (busy_timeline.sh), all on one nsys export made once (EXPORT_CACHE). Each
# part's files are packed into OUT/PART.tgz as soon as it ends, so a call cut short still
# returns what it finished (the device tool returns at most 8 files). build/devrun must be made
# with `PERF=1 scripts/device/make_devrun.sh`, the older builds copied into it.
#   scripts/device/scaling_call.sh OUT OLD_BIN[,OLD_BIN...]      (about 6 minutes at 8 M launches)
# Env: NSYS_LAUNCHES (default 8000000), ROUNDS (the builds', default 7), CURVE_ROUNDS (default 3),
#      CURVE (default "1 2 4 8 16"), T (the builds' and the timeline's threads, default 16).
set -u
out=${1:?usage: scaling_call.sh OUT OLD_BIN[,OLD_BIN...]}
old=${2:?usage: scaling_call.sh OUT OLD_BIN[,OLD_BIN...]}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export EXPORT_CACHE=${EXPORT_CACHE:-${TMPDIR:-/tmp}/kernlens-export-cache}
export NSYS_LAUNCHES=${NSYS_LAUNCHES:-8000000} RAW_MB="" TRACE_MB=""
mkdir -p "$out"
# shellcheck source=big_inputs.sh
source "$here/big_inputs.sh"
use_devrun

pack() {  # PART: OUT/PART/ into OUT/PART.tgz, the folder removed
  tar -C "$out" -czf "$out/$1.tgz" "$1" && rm -rf "${out:?}/$1"
}

work=${TMPDIR:-/tmp}/kernlens-scaling-call
mkdir -p "$out/probe" "$work"
{
  make_nsys_export "$NSYS_LAUNCHES" "$work/probe.sqlite"
  cat "$work/probe.sqlite" > /dev/null  # in the page cache
  "$devrun/threads_or_processes_probe" ranges "${T:-16}" "$work/probe.sqlite"
} > "$out/probe/ranges.txt" 2>&1
rm -rf "$work"
pack probe
mkdir -p "$out/builds"
THREADS=${T:-16} ROUNDS=${ROUNDS:-7} bash "$here/compare_reader_builds.sh" "$out/builds" "$old" > "$out/builds/log.txt" 2>&1
pack builds
mkdir -p "$out/curve"
ROUNDS=${CURVE_ROUNDS:-3} THREADS=${CURVE:-1 2 4 8 16} bash "$here/step_cpu.sh" "$out/curve" > "$out/curve/log.txt" 2>&1
python3 "$here/step_cpu_table.py" "$out/curve" > "$out/curve/table.txt" 2>&1
pack curve
mkdir -p "$out/timeline"
T=${T:-16} bash "$here/busy_timeline.sh" "$out/timeline" > "$out/timeline/log.txt" 2>&1
pack timeline
ls -la "$out"
