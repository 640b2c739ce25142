#!/usr/bin/env bash
# Issue 22: is the export reader's CPU growth with threads (~45% more CPU on 16 threads than on
# one) the machine's, or one process's? Runs threads_or_processes_probe (built by
# scripts/device/make_devrun.sh) on N threads of one process and in N processes: integer work in
# L2, memory streams, SQLite scans of the export's kernel table (a 1 M export made here, one
# copy per reader, then all on one file, then each copy a rowid range of the one file, as
# kernlens's threads read it), and the ALU work on CPU 0 with each other CPU, to tell
# CPUs that share a core. Prints each copy's CPU time against one copy alone; the host's steal
# (/proc/stat's eighth number) before and after.
#   scripts/device/threads_or_processes.sh OUT      (45 s on 2 CPUs; about 2 minutes on 16)
# Env: N (default: the CPUs).
set -u
out=${1:?usage: threads_or_processes.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=big_inputs.sh
source "$root/scripts/device/big_inputs.sh"
use_devrun
probe=$devrun/threads_or_processes_probe
[[ -x $probe ]] || { echo "no $probe: scripts/device/make_devrun.sh builds it where g++ and libsqlite3-dev are" >&2; exit 2; }
n=${N:-$(nproc)}
work=${TMPDIR:-/tmp}/kernlens-threads-or-processes
mkdir -p "$out" "$work"
{
  echo "== $(date +%T)"; lscpu | grep -E "^CPU\(s\)|Model name|Thread|Core|Socket|NUMA node\(s\)"
  make_nsys_export 1000000 "$work/n0.sqlite"
  files=("$work/n0.sqlite")
  for ((i = 1; i < n; ++i)); do cp "$work/n0.sqlite" "$work/n$i.sqlite"; files+=("$work/n$i.sqlite"); done
  cat "${files[@]}" > /dev/null  # in the page cache
  echo "stat before: $(head -1 /proc/stat)"
  "$probe" alu "$n"
  "$probe" stream "$n"
  "$probe" scan "$n" "${files[@]}"
  "$probe" scan "$n" "$work/n0.sqlite"
  "$probe" ranges "$n" "$work/n0.sqlite"
  "$probe" alu $((n / 2))
  "$probe" scan $((n / 2)) "${files[@]}"
  echo "stat after:  $(head -1 /proc/stat)"
  "$probe" pairs "$n"
  echo "== done $(date +%T)"
} > "$out/threads_or_processes.txt" 2>&1
rm -rf "$work"
cat "$out/threads_or_processes.txt"
