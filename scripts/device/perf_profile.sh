#!/usr/bin/env bash
# Where kernlens's CPU time goes on the GPU machine, function by function (issue 22's scaling):
# for each big input of big_inputs.sh and each --threads of THREADS, `perf stat` (task-clock,
# context switches, CPU migrations, page faults; ROUNDS runs) and `perf record` of one run of
# `kernlens analyze FILE --format json --threads N`, its hottest functions (`perf report --sort
# dso,sym`, or with GRAPH=1 the kernel's call graphs too) into OUT/perf.txt. The GPU machine has
# no perf of its own and allows software events only (cpu-clock; no cycles or instructions):
# build/devrun must be made with `PERF=1 scripts/device/make_devrun.sh`, which carries this
# machine's perf and keeps the symbols.
#   scripts/device/perf_profile.sh OUT          (about a minute)
# Env: THREADS (default "1@2 16"; N@CPUS pins to CPUS), ROUNDS (default 3), RAW_MB (default 1000),
#      TRACE_MB (default 1000), NSYS_LAUNCHES (default 1000000); "" skips an input. TOP (default
#      40): functions listed a run.
set -u
out=${1:?usage: perf_profile.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=big_inputs.sh
source "$root/scripts/device/big_inputs.sh"
use_devrun perf perf_profile.sh
work=${TMPDIR:-/tmp}/kernlens-perf-profile
mkdir -p "$out" "$work"
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)|per core"; cat /proc/loadavg; cat /proc/sys/kernel/perf_event_paranoid; } > "$out/cpu.txt" 2>&1

lines=${TOP:-40}
[[ -n ${GRAPH:-} ]] && lines=$((lines * 4))  # call graphs take lines of their own

profile() {  # LABEL FILE
  local threads pin r
  cat "$2" > /dev/null  # in the page cache, as the benchmarks read it
  for threads in ${THREADS:-1@2 16}; do
    pin=()
    [[ $threads == *@* ]] && pin=(taskset -c "${threads#*@}")
    local run=("${pin[@]}" "$devrun/kernlens" analyze "$2" --format json -o /dev/null --threads "${threads%@*}")
    echo "== $1 --threads $threads ($(stat -c %s "$2") bytes)"
    for ((r = 0; r < ${ROUNDS:-3}; r++)); do
      perf stat -e task-clock,context-switches,cpu-migrations,page-faults -- "${run[@]}" 2>&1 |
        awk '/task-clock|context-switches|cpu-migrations|page-faults|elapsed/ {printf "%s %s | ", $1, $2} END {print ""}'
    done
    perf record ${GRAPH:+-g} -F 2999 -o "$work/perf.data" -- "${run[@]}" > /dev/null 2>&1
    perf report -i "$work/perf.data" --no-children --sort dso,sym ${GRAPH:+-g caller,0.5,callee --max-stack 12} 2>/dev/null |
      grep -v '^#' | grep -v '^$' | cut -c1-160 | head -n "$lines"
  done
}
each_big_input profile "${RAW_MB-1000}" "${TRACE_MB-1000}" "${NSYS_LAUNCHES-1000000}" > "$out/perf.txt" 2>&1
rm -rf "$work"
cat "$out/perf.txt"
