#!/usr/bin/env bash
# Where a second thread's extra CPU time goes (issue 22): `kernlens analyze` of a 1 GB PyTorch
# trace on 1 and 2 pinned CPUs, each run's user and system time, faults and context switches
# (/usr/bin/time), and cycles and instructions where perf can count them; then the same with
# glibc's allocator held to one arena. build/devrun holds the build (scripts/device/make_devrun.sh).
#   scripts/device/thread_cost.sh OUT          (about 1 minute)
# Env: TRACE_MB (default 1000), ROUNDS (default 5).
set -u
out=${1:?usage: thread_cost.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/devrun/kernlens
export LD_LIBRARY_PATH=$root/build/devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=${TMPDIR:-/tmp}/kernlens-thread-cost
mkdir -p "$out" "$work"
trace=$work/trace.json
python3 "$root/scripts/bench/make_big_trace.py" -s "${TRACE_MB:-1000}" -o "$trace" > /dev/null
cat "$trace" > /dev/null
{ uname -r; cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; nproc; } > "$out/machine.txt"
have_perf=0
perf stat -e cycles,instructions true > /dev/null 2>&1 && have_perf=1
for env in "" "GLIBC_TUNABLES=glibc.malloc.arena_max=1"; do
  for pin in 0 0,1; do
    threads=$(( ${#pin} / 2 + 1 ))
    for ((r = 0; r < ${ROUNDS:-5}; r++)); do
      env $env /usr/bin/time -f "${env:-default} cpus=$pin wall %e user %U sys %S minflt %R invcs %c vcs %w" \
        taskset -c "$pin" "$bin" analyze "$trace" --format json -o /dev/null --threads "$threads"
    done
    if ((have_perf)); then
      env $env taskset -c "$pin" perf stat -e task-clock,cycles,instructions,page-faults,context-switches \
        "$bin" analyze "$trace" --format json -o /dev/null --threads "$threads" 2>&1 | grep -E "task-clock|cycles|instructions|faults|switches|elapsed|user|sys"
    fi
  done
done > "$out/thread_cost.txt" 2>&1
rm -f "$trace"
cat "$out/thread_cost.txt"
