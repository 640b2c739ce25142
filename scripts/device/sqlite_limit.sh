#!/usr/bin/env bash
# How near SQLite's own limit the nsys reader's kernel rows come on N threads (issue 22's
# scaling): on a million-kernel export (big_inputs.sh), for each --threads of THREADS,
# bench/sqlite_limit.cpp (the reader's SELECT on N connections, every column fetched once and
# summed; and a compute loop, the machine's limit for work that touches no memory) beside the
# step times of `kernlens analyze FILE --format json --verbose --threads N`. Uses build/devrun
# (scripts/device/make_devrun.sh) with bench/bench_sqlite_limit beside it.
#   scripts/device/sqlite_limit.sh OUT          (about a minute)
# Env: THREADS (default "1@2 2@2,3 4@2-5 8@2-9 16"; N@CPUS pins to CPUS), ROUNDS (default 5),
#      NSYS_LAUNCHES (default 1000000). KERNLENS: another kernlens binary.
set -u
out=${1:?usage: sqlite_limit.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=big_inputs.sh
source "$root/scripts/device/big_inputs.sh"
devrun=$root/build/devrun
kernlens=$(realpath "${KERNLENS:-$devrun/kernlens}")
limit=$devrun/bench/bench_sqlite_limit
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=${TMPDIR:-/tmp}/kernlens-sqlite-limit
mkdir -p "$out" "$work"
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)|per core"; cat /proc/loadavg; } > "$out/cpu.txt" 2>&1

side_by_side() {  # LABEL FILE
  local threads pin
  cat "$2" > /dev/null  # in the page cache, as the benchmarks read it
  for threads in ${THREADS:-1@2 2@2,3 4@2-5 8@2-9 16}; do
    pin=()
    [[ $threads == *@* ]] && pin=(taskset -c "${threads#*@}")
    echo "== $1 --threads $threads"
    ROUNDS=${ROUNDS:-5} "${pin[@]}" "$limit" "$2" "${threads%@*}"
    "${pin[@]}" "$kernlens" analyze "$2" --format json -o /dev/null --verbose --threads "${threads%@*}" 2>&1 |
      grep -E "^  read |kernel rows|API calls|merged|^  analysis"
  done
}
each_big_input side_by_side "" "" "${NSYS_LAUNCHES-1000000}" > "$out/sqlite_limit.txt" 2>&1
rm -rf "$work"
cat "$out/sqlite_limit.txt"
