#!/usr/bin/env bash
# Whether the GPU machine gives a 16-thread `kernlens analyze` its 16 CPUs (issue 22's scaling):
# the cgroup's CPU quota and throttling, the host's steal time (/proc/stat, per CPU), and the
# threads' run-queue delay (perf sched: runnable, waiting for a CPU) over runs of each big input
# of big_inputs.sh at --threads 16 and at one thread on CPU 2, and who had each CPU during one
# 16-thread run (cpu_owners.py), into OUT/share.txt.
# build/devrun must be made with `PERF=1 scripts/device/make_devrun.sh`.
#   scripts/device/cpu_share_probe.sh OUT          (about 2 minutes)
# Env: RUNS (default 10; 0: only who had the CPUs), RAW_MB (default 1000), TRACE_MB (default 1000), NSYS_LAUNCHES
#      (default 1000000); "" skips an input.
set -u
out=${1:?usage: cpu_share_probe.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=big_inputs.sh
source "$root/scripts/device/big_inputs.sh"
use_devrun perf cpu_share_probe.sh
kernlens=$devrun/kernlens
work=${TMPDIR:-/tmp}/kernlens-cpu-share
mkdir -p "$out" "$work"

cgroup_facts() {
  local cg
  cg=/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)
  echo "cgroup $cg"
  for f in cpu.max cpu.weight cpuset.cpus.effective cpu.stat; do
    [[ -r $cg/$f ]] && { echo "-- $f"; cat "$cg/$f"; }
  done
}

# Per-CPU jiffies from /proc/stat: cpuN user nice system idle iowait irq softirq steal.
cpu_jiffies() { awk '/^cpu[0-9]/ {print $1, $2 + $3 + $4 + $7 + $8, $5 + $6, $9}' /proc/stat; }

# share LABEL FILE THREADS [PIN]: RUNS runs; busy, idle and steal jiffies summed over CPUs, and
# the CPUs with steal; the cgroup's throttling over the same runs.
share() {
  local label=$1 file=$2 threads=$3 pin=() i before after t0 t1 cg
  [[ -n ${4:-} ]] && pin=(taskset -c "$4")
  cg=/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)
  before=$(cpu_jiffies)
  local thr0 thr1
  thr0=$(grep -E "nr_throttled|throttled_usec" "$cg/cpu.stat" 2>/dev/null | tr '\n' ' ')
  t0=$(date +%s.%N)
  for ((i = 0; i < ${RUNS:-10}; i++)); do
    "${pin[@]}" "$kernlens" analyze "$file" --format json -o /dev/null --threads "$threads" 2> /dev/null
  done
  t1=$(date +%s.%N)
  after=$(cpu_jiffies)
  thr1=$(grep -E "nr_throttled|throttled_usec" "$cg/cpu.stat" 2>/dev/null | tr '\n' ' ')
  paste <(echo "$before") <(echo "$after") | awk -v label="$label" -v threads="$threads" -v secs="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" '
    { busy += $6 - $2; idle += $7 - $3; steal += $8 - $4; if ($8 - $4 > 0) stolen = stolen " " $1 ":" $8 - $4 }
    END { printf "%s --threads %s: %.2f s for the runs; jiffies busy %d idle %d steal %d (steal %.1f%% of busy+steal); CPUs with steal:%s\n",
                 label, threads, secs, busy, idle, steal, 100 * steal / (busy + steal + 1e-9), stolen }'
  echo "   throttling before: $thr0"
  echo "   throttling after:  $thr1"
}

# sched LABEL FILE: perf sched of one 16-thread run (after one to warm up): each thread's run
# time, switches and run-queue delay (perf sched latency), and the run's whole summary.
sched() {
  local run=("$kernlens" analyze "$2" --format json -o /dev/null --threads 16)
  "${run[@]}" > /dev/null 2>&1
  perf sched record -o "$work/sched.data" -- "${run[@]}" > /dev/null 2>&1
  echo "-- perf sched latency -p, $1 --threads 16 (by thread; delay: runnable, waiting for a CPU)"
  perf sched latency -p -i "$work/sched.data" --sort runtime 2>/dev/null | grep -E "kernlens|TOTAL" | head -40
  echo "-- perf sched timehist, $1: kernlens's run, wait (off a CPU) and scheduling delay summed, ms"
  perf sched timehist -i "$work/sched.data" 2>/dev/null |
    awk '$3 ~ /^kernlens/ {runs++; wait += $4; delay += $5; run += $6} END {printf "%d slices: run %.1f, wait %.1f, sch delay %.1f\n", runs, run, wait, delay}'
  perf sched timehist -i "$work/sched.data" -s 2>/dev/null | sed -n '/Idle stats/,$p'
}

# owners LABEL FILE: who had each CPU during one 16-thread run (after one to warm up): a
# system-wide cpu-clock record, binned by cpu_owners.py (kernlens, idle, other tasks, no sample).
owners() {
  local run=("$kernlens" analyze "$2" --format json -o /dev/null --threads 16)
  "${run[@]}" > /dev/null 2>&1
  perf record -a -e cpu-clock -F 5000 -o "$work/owners.data" -- "${run[@]}" > /dev/null 2>&1
  echo "-- who had the CPUs, $1 --threads 16 (1 ms bins)"
  perf script -F comm,tid,cpu,time -i "$work/owners.data" 2>/dev/null |
    python3 "$root/scripts/device/cpu_owners.py" --hz 5000 --bin-ms 1 --cpus "$(nproc)"
}

probe() {  # LABEL FILE
  cat "$2" > /dev/null  # in the page cache, as the benchmarks read it
  echo "== $1 ($(stat -c %s "$2") bytes)"
  if ((${RUNS:-10} > 0)); then
    share "$1" "$2" 16
    share "$1" "$2" 1 2
    sched "$1" "$2"
  fi
  owners "$1" "$2"
}

{
  nproc
  lscpu | grep -E "Model name|^CPU\(s\)|Thread|MHz"
  cat /proc/loadavg
  cgroup_facts
  each_big_input probe "${RAW_MB-1000}" "${TRACE_MB-1000}" "${NSYS_LAUNCHES-1000000}"
  cat /proc/loadavg
} > "$out/share.txt" 2>&1
rm -rf "$work"
cat "$out/share.txt"
