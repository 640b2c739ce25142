#!/usr/bin/env bash
# `kernlens sweep ingest` on 1,000 run directories, then the cross-model views and the page
# (issue 20): the sweep is written by scripts/bench/make_sweep_runs.py from the four real H100
# prefill runs in examples/data/runs (10 models x 10 batch sizes x 10 token counts).
#
#   bench/sweep_ingest.sh [BUILD_DIR] [WORK_DIR]     (defaults: build, /tmp/kernlens-sweep-bench)
# Env: ROUNDS  runs of each view query, the best one kept (default 5)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
work=${2:-/tmp/kernlens-sweep-bench}
rounds=${ROUNDS:-5}
kernlens=$build/kernlens
[[ -x $kernlens ]] || { echo "sweep_ingest.sh: no $kernlens (build it first)" >&2; exit 2; }

seconds() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
best_of() {
  local best=""
  for _ in $(seq "$rounds"); do
    local t
    t=$(seconds "$@")
    if [[ -z $best ]] || awk "BEGIN { exit !($t < $best) }"; then best=$t; fi
  done
  echo "$best"
}

if [[ ! -f $work/sweep.toml ]]; then
  echo "== writing 1,000 run directories under $work (a few minutes)"
  python3 "$root/scripts/bench/make_sweep_runs.py" "$work"
fi
rm -f "$work"/sweep.db*
echo "== $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-58s %s\n' "sweep ingest, 1,000 runs into a new database (s)" "$(seconds "$kernlens" sweep ingest "$work/sweep.toml" --db "$work/sweep.db")"
printf '%-58s %s\n' "sweep ingest again, nothing to add (s)" "$(seconds "$kernlens" sweep ingest "$work/sweep.toml" --db "$work/sweep.db")"
for view in class-scaling family-scaling; do
  printf '%-58s %s\n' "db query --view $view, best of $rounds (s)" \
    "$(best_of "$kernlens" db query --db "$work/sweep.db" --view "$view" --format csv -o "$work/$view.csv")"
done
printf '%-58s %s\n' "report --db, the cross-model page, best of $rounds (s)" \
  "$(best_of "$kernlens" report --db "$work/sweep.db" -o "$work/across.html")"
echo "== rows: $(($(wc -l < "$work/class-scaling.csv") - 1)) op class cells, $(($(wc -l < "$work/family-scaling.csv") - 1)) family cells;" \
     "database $(du -h "$work/sweep.db" | cut -f1), page $(du -h "$work/across.html" | cut -f1)"
