#!/usr/bin/env bash
# How near the machine's own limit kernlens reads on N threads (issue 22's scaling): for each
# big input of big_inputs.sh and each --threads of THREADS, bench/read_limit.cpp (the file
# mapped and every byte looked at once on N threads, 1 MiB parts; no parsing) beside
# `kernlens analyze FILE --format json --threads N` as a whole process (ROUNDS runs, median,
# scripts/bench/compare_builds.py), and `kernlens --version` (a process's start and exit). For
# an nsys export also bench/sqlite_limit.cpp: SQLite's own reading of the kernel rows on N
# connections (the reader's SELECT, every column fetched once), and a compute loop's time (the
# machine's limit for work that touches no memory); `where_time_goes.sh` shows the reader's own
# "kernel rows" step to set beside it. Uses build/devrun (scripts/device/make_devrun.sh) with
# bench/bench_read_limit and bench/bench_sqlite_limit beside it.
#   scripts/device/read_limit.sh OUT          (about 2 minutes)
# Env: THREADS (default "1@2 2@2,3 4@2-5 8@2-9 16"; N@CPUS pins to CPUS), ROUNDS (default 5),
#      RAW_MB (default 1000), TRACE_MB (default 1000), NSYS_LAUNCHES (default 1000000).
set -u
out=${1:?usage: read_limit.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=big_inputs.sh
source "$root/scripts/device/big_inputs.sh"
devrun=$root/build/devrun
kernlens=$devrun/kernlens
limit=$devrun/bench/bench_read_limit
sqlite_limit=$devrun/bench/bench_sqlite_limit
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=${TMPDIR:-/tmp}/kernlens-read-limit
mkdir -p "$out" "$work"
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)"; cat /proc/loadavg; } > "$out/cpu.txt" 2>&1

side_by_side() {  # LABEL FILE
  local threads pin
  cat "$2" > /dev/null  # in the page cache, as the benchmarks read it
  for threads in ${THREADS:-1@2 2@2,3 4@2-5 8@2-9 16}; do
    pin=()
    [[ $threads == *@* ]] && pin=(taskset -c "${threads#*@}")
    echo "== $1 --threads $threads ($(stat -c %s "$2") bytes)"
    ROUNDS=${ROUNDS:-5} "${pin[@]}" "$limit" "$2" "${threads%@*}"
    [[ $1 == nsys_* ]] && ROUNDS=${ROUNDS:-5} "${pin[@]}" "$sqlite_limit" "$2" "${threads%@*}"
    ROUNDS=${ROUNDS:-5} "${pin[@]}" python3 "$root/scripts/bench/compare_builds.py" "$kernlens" \
      analyze "$2" --format json -o /dev/null --threads "${threads%@*}"
  done
}
{
  echo "== a process's start and exit"
  ROUNDS=${ROUNDS:-5} taskset -c 2 python3 "$root/scripts/bench/compare_builds.py" "$kernlens" --version
  each_big_input side_by_side "${RAW_MB-1000}" "${TRACE_MB-1000}" "${NSYS_LAUNCHES-1000000}"
} > "$out/limit.txt" 2>&1
rm -rf "$work"
cat "$out/limit.txt"
