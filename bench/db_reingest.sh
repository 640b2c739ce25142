#!/usr/bin/env bash
# `kernlens db ingest` of 200 run directories into a new database, then the same 200 again,
# unchanged (issue 22: re-ingesting costs under 5% of the first ingest, as the run key is
# computed and looked up before anything is read). The runs are written by
# scripts/bench/make_sweep_runs.py from the real H100 prefill runs in examples/data/runs (2
# models x 10 batch sizes x 10 token counts). Rounds alternate; medians of wall and CPU time.
#
#   bench/db_reingest.sh [BUILD_DIR] [WORK_DIR]     (defaults: build, /tmp/kernlens-reingest-bench)
# Env: ROUNDS (default 5)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
work=${2:-/tmp/kernlens-reingest-bench}
rounds=${ROUNDS:-5}
kernlens=$build/kernlens
[[ -x $kernlens ]] || { echo "db_reingest.sh: no $kernlens (build it first)" >&2; exit 2; }
if [[ ! -d $work/runs ]]; then
  echo "== writing 200 run directories under $work"
  python3 "$root/scripts/bench/make_sweep_runs.py" "$work" --models 2 --batches 10 --tokens 10 > /dev/null
fi
runs=("$work"/runs/*/run)

timed() {  # prints "wall cpu" of the command
  local t
  t=$(mktemp)
  /usr/bin/time -o "$t" -f '%e %U %S' "$@" > /dev/null
  awk '{ print $1, $2 + $3 }' "$t"
  rm -f "$t"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "== $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), ${#runs[@]} runs ($(du -sh "$work/runs" | cut -f1)), $rounds rounds"
first_w=() first_c=() again_w=() again_c=()
for _ in $(seq "$rounds"); do
  rm -f "$work"/reingest.db*
  read -r w c < <(timed "$kernlens" db ingest --db "$work/reingest.db" "${runs[@]}")
  first_w+=("$w"); first_c+=("$c")
  read -r w c < <(timed "$kernlens" db ingest --db "$work/reingest.db" "${runs[@]}")
  again_w+=("$w"); again_c+=("$c")
done
fw=$(printf '%s\n' "${first_w[@]}" | median); fc=$(printf '%s\n' "${first_c[@]}" | median)
aw=$(printf '%s\n' "${again_w[@]}" | median); ac=$(printf '%s\n' "${again_c[@]}" | median)
printf '%-44s wall %6.2f s   cpu %6.2f s\n' "db ingest, 200 runs into a new database" "$fw" "$fc"
printf '%-44s wall %6.2f s   cpu %6.2f s\n' "db ingest, the same 200 again (unchanged)" "$aw" "$ac"
printf 'again / first: %.1f%% of the wall clock, %.1f%% of the CPU time\n' \
  "$(awk "BEGIN { print 100 * $aw / $fw }")" "$(awk "BEGIN { print 100 * $ac / ($fc > 0 ? $fc : 1) }")"
