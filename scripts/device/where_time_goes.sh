#!/usr/bin/env bash
# Where `kernlens analyze` spends its time on the GPU machine's CPUs (issue 22's scaling):
# `analyze FILE --format json --verbose` on the big inputs of big_inputs.sh (a raw page, a
# PyTorch trace, an nsys export), at each --threads of THREADS, the step times it prints
# (each input's read, the analysis's parts, the output) into OUT/steps.txt. Uses
# build/devrun (scripts/device/make_devrun.sh).
#   scripts/device/where_time_goes.sh OUT          (about 2 minutes)
# Env: THREADS (default "1 2 16"; N@CPUS pins N threads to CPUS with taskset), RAW_MB (default 200), TRACE_MB (default 1000),
#      NSYS_LAUNCHES (default 1000000); "" skips an input. KERNLENS: another kernlens binary
#      (default build/devrun/kernlens).
set -u
out=${1:?usage: where_time_goes.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=big_inputs.sh
source "$root/scripts/device/big_inputs.sh"
devrun=$root/build/devrun
kernlens=$(realpath "${KERNLENS:-$devrun/kernlens}")
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=${TMPDIR:-/tmp}/kernlens-where-time-goes
mkdir -p "$out" "$work"
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)"; cat /proc/loadavg; } > "$out/cpu.txt" 2>&1

steps() {  # LABEL FILE
  local threads
  cat "$2" > /dev/null  # in the page cache, as the benchmarks read it
  for threads in ${THREADS:-1 2 16}; do
    local pin=()  # N@CPUS: N threads on those CPUs only
    [[ $threads == *@* ]] && pin=(taskset -c "${threads#*@}")
    echo "== $1 --threads $threads ($(stat -c %s "$2") bytes)"
    (cd "$(dirname "$2")" && "${pin[@]}" "$kernlens" analyze "$(basename "$2")" --format json -o /dev/null --verbose \
      --threads "${threads%@*}" 2>&1)
  done
}
each_big_input steps "${RAW_MB-200}" "${TRACE_MB-1000}" "${NSYS_LAUNCHES-1000000}" > "$out/steps.txt" 2>&1
rm -rf "$work"
cat "$out/steps.txt"
