#!/usr/bin/env bash
# `kernlens analyze` of an Nsight Systems SQLite export against the plain SQL a user would
# write instead (issue 22): the sqlite3 CLI joining every kernel with its launch call
# (CUPTI_ACTIVITY_KIND_RUNTIME, same process and correlation id) and ranking kernels by total
# time with GROUP BY. kernlens does more (NVTX stages, classes, gaps, the JSON report). Whole
# processes, interleaved rounds, medians of wall and CPU time, the largest peak memory
# (/usr/bin/time). The input is `ninja bench_big_nsys` (a million kernels, 118 MB), read once
# before timing so that it is in the page cache. sqlite3 is skipped, and says so, where it is
# not installed (Debian: sqlite3).
#
#   bench/nsys_vs_sqlite3.sh [BUILD_DIR] [FILE]     (defaults: build, BUILD_DIR/bench/big_nsys.sqlite)
# Env: ROUNDS (default 5), THREADS (the --threads values to run kernlens with, default "1 2"),
#      BASELINE (another kernlens binary, e.g. a build of main, run the same way with its default
#      threads as "baseline")
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
file=${2:-$build/bench/big_nsys.sqlite}
rounds=${ROUNDS:-5}
kernlens=$build/kernlens
[[ -x $kernlens ]] || { echo "nsys_vs_sqlite3.sh: no $kernlens (build it first)" >&2; exit 2; }
[[ -f $file ]] || cmake --build "$build" --target bench_big_nsys
cat "$file" > /dev/null
sqlite=$(command -v sqlite3 || true)
[[ -n $sqlite ]] || echo "== sqlite3 not found: its row is skipped"
query='SELECT s.value, count(*), sum(k."end" - k.start) AS total_ns
FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r
  ON r.correlationId = k.correlationId AND r.globalTid >> 24 = k.globalPid >> 24
JOIN StringIds AS s ON s.id = k.demangledName
GROUP BY k.demangledName ORDER BY total_ns DESC;'

# shellcheck source=side_by_side.sh
source "$root/bench/side_by_side.sh"

labels=()
for n in ${THREADS:-1 2}; do labels+=("kernlens --threads $n"); done
[[ -n ${BASELINE:-} ]] && labels+=("baseline")
[[ -n $sqlite ]] && labels+=("sqlite3 join + GROUP BY")
echo "== $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $rounds interleaved rounds, $file"
for _ in $(seq "$rounds"); do
  for n in ${THREADS:-1 2}; do
    run "kernlens --threads $n" "$kernlens" analyze "$file" --format json -o /dev/null --threads "$n"
  done
  [[ -n ${BASELINE:-} ]] && run "baseline" "$BASELINE" analyze "$file" --format json -o /dev/null
  [[ -n $sqlite ]] && run "sqlite3 join + GROUP BY" "$sqlite" -readonly "$file" "$query"
done
echo "== after: load average $(cut -d' ' -f1-3 /proc/loadavg)"
bytes=$(stat -c %s "$file")
for label in "${labels[@]}"; do
  w=$(echo "${wall[$label]}" | median)
  c=$(echo "${cpu[$label]}" | median)
  printf '%-26s wall %6.3f s   cpu %6.3f s   peak %6.1f MiB = %4.2f x file\n' "$label" "$w" "$c" \
    "$(awk "BEGIN { print ${peak[$label]} / 1024 }")" "$(awk "BEGIN { print ${peak[$label]} * 1024 / $bytes }")"
done
