#!/usr/bin/env bash
# Does a 16-thread `kernlens analyze` pay for memory given back while its other threads run
# (issue 22's scaling)? 16 threads use ~50% more CPU than one on the nsys export, while 16
# pinned processes sharing nothing use ~4% more (independent_limit.sh): what one address
# space adds is a lead. When a thread unmaps memory (free() of a large block, or an arena
# trimmed with madvise), the kernel flushes that range from the TLB of every CPU the process
# runs on, by an interrupt to each (a VM exit on this guest). For each big input of
# big_inputs.sh: the TLB shootdown interrupts (/proc/interrupts, all CPUs) and the munmap,
# madvise and mmap calls (perf's syscall tracepoints) of one run at 1 and 16 threads; then the
# same binary with glibc's trimming and mmap threshold fixed (GLIBC_TUNABLES: freed memory kept
# in the arenas, blocks under 32 MiB never mapped alone) against it at 16 threads, interleaved
# (scripts/bench/compare_builds.py), with each one's peak RSS. `PERF=1 make_devrun.sh` first.
#   scripts/device/shootdown_probe.sh OUT          (about 2 minutes)
# Env: ROUNDS (default 7), ALONE_CPU (one thread's CPU, default 2), RAW_MB (default 1000), TRACE_MB (default ""), NSYS_LAUNCHES (default "1000000").
set -u
out=${1:?usage: shootdown_probe.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=big_inputs.sh
source "$root/scripts/device/big_inputs.sh"
use_devrun perf shootdown_probe.sh
kernlens=$devrun/kernlens
kept=$devrun/kernlens-malloc-kept
work=${TMPDIR:-/tmp}/kernlens-shootdown-probe
mkdir -p "$out" "$work"
cat > "$kept" << EOF
#!/bin/sh
GLIBC_TUNABLES=glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=33554432 exec "$kernlens" "\$@"
EOF
chmod +x "$kept"
shootdowns() { awk '$1 == "TLB:" { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i } END { print s + 0 }' /proc/interrupts; }

probe() {  # LABEL FILE
  local threads pin before after bin
  cat "$2" > /dev/null
  for threads in "1@${ALONE_CPU:-2}" 16; do
    pin=()
    [[ $threads == *@* ]] && pin=(taskset -c "${threads#*@}")
    for bin in "$kernlens" "$kept"; do
      before=$(shootdowns)
      perf stat -x, -e syscalls:sys_enter_munmap,syscalls:sys_enter_madvise,syscalls:sys_enter_mmap,task-clock,context-switches \
        -o "$work/stat.txt" -- "${pin[@]}" "$bin" analyze "$2" --format json -o /dev/null --threads "${threads%@*}" > /dev/null 2>&1
      after=$(shootdowns)
      printf '%-12s %-5s %-24s TLB shootdowns %8d  %s\n' "$1" "$threads" "$(basename "$bin")" $((after - before)) \
        "$(awk -F, '/^[0-9.]/ { printf "%s %s  ", $1, $3 }' "$work/stat.txt")"
    done
  done
  ROUNDS=${ROUNDS:-7} python3 "$root/scripts/bench/compare_builds.py" "$kernlens,$kept" analyze "$2" --format json -o /dev/null --threads 16
  for bin in "$kernlens" "$kept"; do
    printf '%-40s peak at 16 threads %7.1f MiB  md5 %s\n' "$(basename "$bin")" "$(peak_mib "$bin" "$2" 16)" \
      "$(json_md5 "$bin" "$2" | cut -c1-8)"
  done
}
each_big_input probe "${RAW_MB-1000}" "${TRACE_MB-}" "${NSYS_LAUNCHES-1000000}" > "$out/shootdowns.txt" 2>&1
rm -rf "$work" "$kept"
cat "$out/shootdowns.txt"
