#!/usr/bin/env bash
# `kernlens names` against llvm-cxxfilt on a million mangled kernel names, as whole processes
# (issue 22): interleaved rounds, medians of wall and CPU time, the largest peak memory.
# The inputs (scripts/bench/make_names.py): a million distinct names (the worst case for the
# cache) and a million names repeated as a trace's launches repeat them. llvm-cxxfilt only
# demangles (kernlens also finds the base name and classifies); it is skipped, and says so,
# where it is not installed (Debian: llvm).
#
#   bench/names_vs_cxxfilt.sh [BUILD_DIR] [WORK_DIR]     (defaults: build, /tmp/kernlens-names-bench)
# Env: ROUNDS (default 5). kernlens runs with its default --threads (the CPUs it may use) and
# with --threads 1.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
work=${2:-/tmp/kernlens-names-bench}
rounds=${ROUNDS:-5}
kernlens=$build/kernlens
[[ -x $kernlens ]] || { echo "names_vs_cxxfilt.sh: no $kernlens (build it first)" >&2; exit 2; }
[[ -f $work/mangled_distinct.txt ]] || python3 "$root/scripts/bench/make_names.py" "$work"
cxxfilt=$(command -v llvm-cxxfilt || true)
[[ -n $cxxfilt ]] || echo "== llvm-cxxfilt not found: its rows are skipped"

# shellcheck source=side_by_side.sh
source "$root/bench/side_by_side.sh"

labels=()
for input in distinct launches; do
  labels+=("kernlens names, $input" "kernlens names --threads 1, $input")
  [[ -n $cxxfilt ]] && labels+=("llvm-cxxfilt, $input")
done
echo "== $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $rounds interleaved rounds"
for _ in $(seq "$rounds"); do
  for input in distinct launches; do
    run "kernlens names, $input" "$kernlens" names "$work/mangled_$input.txt"
    run "kernlens names --threads 1, $input" "$kernlens" names "$work/mangled_$input.txt" --threads 1
    [[ -n $cxxfilt ]] && run "llvm-cxxfilt, $input" sh -c "exec '$cxxfilt' < '$work/mangled_$input.txt'"
  done
done
names=$(wc -l < "$work/mangled_distinct.txt")
for label in "${labels[@]}"; do
  w=$(echo "${wall[$label]}" | median)
  c=$(echo "${cpu[$label]}" | median)
  printf '%-34s wall %6.2f s %6.0f k names/s   cpu %6.2f s %6.0f k names/s   peak %5.1f MiB\n' "$label" \
    "$w" "$(awk "BEGIN { print $names / $w / 1000 }")" "$c" "$(awk "BEGIN { print $names / ($c > 0 ? $c : 0.01) / 1000 }")" \
    "$(awk "BEGIN { print ${peak[$label]} / 1024 }")"
done
