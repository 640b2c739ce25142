#!/usr/bin/env bash
# Where a parallel `kernlens analyze` waits on one thread (issue 22's scaling): for each big
# input of big_inputs.sh, `perf record -F 10000` of one run at --threads T (after one to warm
# up) and its busy-CPU timeline (busy_timeline.py: CPUs busy, threads and the hottest functions
# per 2 ms) into OUT/timeline.txt. DWARF=1 also keeps each run's samples with their call
# stacks (`perf record --call-graph dwarf`, 4 kHz) as OUT/LABEL.dwarf.txt.xz, to tell which
# caller a serial stretch is in (scripts/device/stack_windows.py prints them by window).
# build/devrun must be made with `PERF=1 scripts/device/make_devrun.sh` (the GPU machine has no
# perf of its own).
#   scripts/device/busy_timeline.sh OUT          (about a minute)
# Env: T (default 16), BIN_MS (default 2), RAW_MB (default 1000), TRACE_MB (default 1000),
#      NSYS_LAUNCHES (default 1000000); "" skips an input. KERNLENS: another binary in build/devrun.
set -u
out=${1:?usage: busy_timeline.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=big_inputs.sh
source "$root/scripts/device/big_inputs.sh"
use_devrun perf busy_timeline.sh
kernlens=$devrun/${KERNLENS:-kernlens}
work=${TMPDIR:-/tmp}/kernlens-busy-timeline
mkdir -p "$out" "$work"

timeline() {  # LABEL FILE
  local run=("$kernlens" analyze "$2" --format json -o /dev/null --threads "${T:-16}") r
  cat "$2" > /dev/null  # in the page cache, as the benchmarks read it
  for r in 1 2; do perf record -F 10000 -o "$work/perf.data" -- "${run[@]}" > /dev/null 2>&1; done
  echo "== $1 --threads ${T:-16}"
  perf script -F tid,time,ip,sym -i "$work/perf.data" 2>/dev/null |
    python3 "$root/scripts/device/busy_timeline.py" --bin-ms "${BIN_MS:-2}" --top 4
  if [[ -n ${DWARF:-} ]]; then
    perf record --call-graph dwarf,16384 -F 4000 -o "$work/dwarf.data" -- "${run[@]}" > /dev/null 2>&1
    perf script -F tid,time,ip,sym -i "$work/dwarf.data" 2>/dev/null | xz -1 > "$out/$1.dwarf.txt.xz"
  fi
}
each_big_input timeline "${RAW_MB-1000}" "${TRACE_MB-1000}" "${NSYS_LAUNCHES-1000000}" > "$out/timeline.txt" 2>&1
rm -rf "$work"
cat "$out/timeline.txt"
