#!/usr/bin/env bash
# Times kernlens against a pandas peer on one big Nsight Compute raw-page CSV, in one run:
#   1. `kernlens analyze FILE --format json -o /dev/null`, best of 3, wall clock -> MB/s
#   2. pandas read_csv + groupby('Kernel Name') of the duration, best of 3 (perf_counter)
#   3. the Google Benchmark reader benchmark (parsing from memory), best of 3 -> MB/s
# All three are pinned to one CPU (taskset, when present): the target is per-core speed.
# Installs nothing; generates FILE with scripts/bench_make_big_raw.py when it is missing.
#
# Usage: scripts/bench_vs_pandas.sh [FILE]
# Env:   BUILD_DIR (default build; use a Release build), KERNLENS_BENCH_RAW_CSV (FILE),
#        PYTHON (an interpreter with pandas; default: the first of python3, /usr/bin/python3
#        that imports it).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
file=${1:-${KERNLENS_BENCH_RAW_CSV:-$build/bench/big_raw.csv}}
kernlens=$build/kernlens
bench=$build/bench/bench_ncu_raw

die() { echo "bench_vs_pandas: $*" >&2; exit 1; }
command -v python3 >/dev/null || die "python3 is needed (timing arithmetic, JSON parsing)"
[[ -x $kernlens ]] || die "$kernlens not found: build first (cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C $build)"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
[[ $build_type == Release ]] || echo "warning: $build is a '${build_type:-unknown}' build; figures are meant for Release" >&2

if [[ ! -f $file ]]; then
  echo "== $file missing: generating it (200 MB)"
  python3 "$root/scripts/bench_make_big_raw.py" -o "$file"
fi
bytes=$(stat -c %s "$file")
mb=$(python3 -c "print(f'{$bytes / 1e6:.1f}')")

pin=()
if command -v taskset >/dev/null; then pin=(taskset -c 0); fi
cat "$file" > /dev/null  # every run reads from the page cache, none from the disk

echo "== file: $file ($mb MB)"
echo "== machine: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)${pin:+, pinned to CPU 0}"

# 1. Our CLI, end to end (read, aggregate, JSON), best of 3.
best_ns=
for _ in 1 2 3; do
  start=$(date +%s%N)
  "${pin[@]}" "$kernlens" analyze "$file" --format json -o /dev/null ||
    die "kernlens analyze failed on $file"
  ns=$(($(date +%s%N) - start))
  if [[ -z $best_ns || $ns -lt $best_ns ]]; then best_ns=$ns; fi
done
ours_s=$(python3 -c "print(f'{$best_ns / 1e9:.3f}')")
ours_mbs=$(python3 -c "print(f'{$bytes / 1e6 / ($best_ns / 1e9):.1f}')")
echo "kernlens analyze (json): best of 3 = $ours_s s  -> $ours_mbs MB/s"

# 2. Google Benchmark: the reader alone, from memory.
if [[ -x $bench ]]; then
  json=$(KERNLENS_BENCH_RAW_CSV=$file "${pin[@]}" "$bench" --benchmark_filter='BM_ReadNcuRaw' \
    --benchmark_repetitions=3 --benchmark_format=json 2>/dev/null) || die "$bench failed"
  bench_mbs=$(python3 -c '
import json, sys
runs = [b for b in json.load(sys.stdin)["benchmarks"] if b.get("run_type") == "iteration"]
if not runs or "error_message" in runs[0]:
    sys.exit("no result: " + (runs[0].get("error_message", "") if runs else "no runs"))
best = max(b["bytes_per_second"] for b in runs)
print(f"{best / 1e6:.1f}")' <<<"$json") ||
    die "cannot read the benchmark's output"
  echo "bench_ncu_raw BM_ReadNcuRaw (in memory, 1 thread): best of 3 = $bench_mbs MB/s"
else
  echo "bench_ncu_raw: $bench not built (needs libbenchmark-dev): skipped"
fi

# 3. The peer: pandas.
python=
for candidate in ${PYTHON:-python3 /usr/bin/python3}; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import pandas' 2>/dev/null; then
    python=$candidate
    break
  fi
done
if [[ -z $python ]]; then
  echo "pandas not installed: peer skipped"
  exit 0
fi
pandas_s=$("${pin[@]}" "$python" - "$file" <<'EOF'
import sys, time
import pandas as pd
path, best = sys.argv[1], float("inf")
for _ in range(3):
    t0 = time.perf_counter()
    df = pd.read_csv(path, skiprows=[1], thousands=",")  # row 1 is the units row
    g = df.groupby("Kernel Name")["gpu__time_duration.sum"].agg(["sum", "count"])
    best = min(best, time.perf_counter() - t0)
    del df, g
print(f"{best:.3f}")
EOF
) || die "the pandas peer failed ($python)"
pandas_version=$("$python" -c 'import pandas; print(pandas.__version__)')
echo "pandas $pandas_version read_csv+groupby ($python): best of 3 = $pandas_s s" \
  "-> $(python3 -c "print(f'{$bytes / 1e6 / $pandas_s:.1f}')") MB/s"
echo "speed ratio (pandas time / kernlens time): $(python3 -c "print(f'{$pandas_s / ($best_ns / 1e9):.1f}')")x"
