#!/usr/bin/env bash
# Reading one big PyTorch profiler trace from Python (the kernlens module) against the CLI, side
# by side: ROUNDS rounds (default 3), each running every contender once so that a noisy host
# slows all alike; the median wall clock and the largest peak memory (/usr/bin/time) of each,
# and Python's ratio to the CLI (issue 18's target: at most 1.2x in time and memory).
#   cli:            kernlens analyze FILE --format json -o /dev/null
#   python:         kernlens.load(FILE).to_json()          (interpreter start and import included)
#   python+pandas:  the same, then .kernels as a DataFrame (pandas imported)
# Makes FILE (500 MB) with scripts/bench/make_big_trace.py when it is missing.
#
# Usage: scripts/bench/python_vs_cli.sh [FILE]
# Env:   ROUNDS, BUILD_DIR (default build; a Release build with the Python module),
#        PYTHON (default /usr/bin/python3: the one the module is built for).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
file=${1:-$build/bench/big_trace.json}
python=${PYTHON:-/usr/bin/python3}
rounds=${ROUNDS:-3}
die() { echo "python_vs_cli: $*" >&2; exit 1; }
[[ -x /usr/bin/time ]] || die "/usr/bin/time is needed for peak memory (Debian: time)"
[[ -x $build/kernlens ]] || die "$build/kernlens not found: build first"
[[ -f $build/python/kernlens/__init__.py ]] || die "$build/python/kernlens not built (pybind11-dev missing?)"
if [[ ! -f $file ]]; then
  echo "== $file missing: generating it (500 MB)"
  mkdir -p "$(dirname "$file")"
  "$python" "$root/scripts/bench/make_big_trace.py" -o "$file"
fi
cat "$file" >/dev/null
echo "== file: $file ($(( $(stat -L -c %s "$file") / 1000000 )) MB); machine: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PYTHONPATH=$build/python
declare -A cmd=(
  [cli]="$build/kernlens analyze $file --format json -o /dev/null"
  [python]="$python -c 'import sys, kernlens; kernlens.load(sys.argv[1]).to_json()' $file"
  [python+pandas]="$python -c 'import sys, kernlens, pandas; kernlens.load(sys.argv[1]).kernels' $file"
)
names=(cli python python+pandas)
for ((r = 1; r <= rounds; r++)); do
  for n in "${names[@]}"; do
    eval "/usr/bin/time -f '%e %M' -o '$tmp/t' ${cmd[$n]}" >/dev/null 2>&1 || die "failed: ${cmd[$n]}"
    echo "$n $(tail -1 "$tmp/t")" >>"$tmp/all"
  done
done
"$python" - "$tmp/all" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, wall, kb = line.split()
    runs[name].append((float(wall), int(kb)))
cli_wall = statistics.median(w for w, _ in runs["cli"])
cli_kb = max(k for _, k in runs["cli"])
for name in ("cli", "python", "python+pandas"):
    wall = statistics.median(w for w, _ in runs[name])
    kb = max(k for _, k in runs[name])
    print(f"{name:15s} {wall:7.3f} s ({wall / cli_wall:4.2f} x cli)  peak {kb / 1024:6.0f} MiB ({kb / cli_kb:4.2f} x cli)")
PY
