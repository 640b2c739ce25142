#!/usr/bin/env bash
# Times kernlens against pandas on one big Nsight Compute raw-page CSV, side by side in one
# run: ROUNDS rounds (default 5), each timing every contender once, so that a noisy host
# slows all of them alike; the medians are reported (the file is in the page cache):
#   1. `kernlens analyze FILE --format json -o /dev/null`, wall clock, as users run it
#      (the file mapped, parsed and analysed on every CPU; issue 22) and pinned to one CPU;
#   2. the reader alone from memory on one CPU (Google Benchmark, best of 3): every metric column
#      decoded, and only what `analyze` reads;
#   3. the peer, pandas: read_csv + groupby('Kernel Name') of the duration, as the issue
#      names it, and the same with usecols= (the cheapest pandas can do this job).
# Installs nothing; generates FILE with scripts/bench/make_big_raw.py when it is missing;
# skips the peer (exit 0) when no python with pandas is found.
#
# Usage: scripts/bench/vs_pandas.sh [FILE]
# Env:   ROUNDS, BUILD_DIR (default build/rel; a Release build), KERNLENS_BENCH_RAW_CSV (FILE),
#        PYTHON (an interpreter with pandas; default: the first of python3, /usr/bin/python3
#        that imports it).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build/rel}
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
  mkdir -p "$(dirname "$file")"
  python3 "$root/scripts/bench/make_big_raw.py" -o "$file"
fi
bytes=$(stat -L -c %s "$file")
mb=$(python3 -c "print(f'{$bytes / 1e6:.1f}')")
one_cpu=()
if command -v taskset >/dev/null; then one_cpu=(taskset -c 0); fi
cat "$file" > /dev/null

echo "== file: $file ($mb MB)"
echo "== machine: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"

rounds=${ROUNDS:-5}
# Wall time of one run of a command, in seconds.
wall() {
  local start
  start=$(date +%s%N)
  "$@" > /dev/null || die "failed: $*"
  python3 -c "print(f'{($(date +%s%N) - $start) / 1e9:.4f}')"
}
median() { python3 -c "import statistics, sys; print(f'{statistics.median(map(float, sys.argv[1:])):.3f}')" "$@"; }
rate() { python3 -c "print(f'{$bytes / 1e6 / $1:.0f} MB/s')"; }
row() { printf '%-58s %8s s  %s\n' "$1" "$2" "$(rate "$2")"; }

python=
for candidate in ${PYTHON:-python3 /usr/bin/python3}; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import pandas' 2>/dev/null; then
    python=$candidate
    break
  fi
done
# The peer, timed inside Python (no interpreter start, no import: the peer gets the benefit).
# Each process runs the job twice: the first call is what a fresh script pays; the second,
# with pandas's memory already faulted in, is pandas at its best, the figure compared.
peer_code='
import sys, time
import pandas as pd
path, cols = sys.argv[1], sys.argv[2] == "usecols"
times = []
for _ in range(2):
    t0 = time.perf_counter()
    df = pd.read_csv(path, skiprows=[1], thousands=",",  # row 1 is the units row
                     usecols=["Kernel Name", "gpu__time_duration.sum"] if cols else None)
    g = df.groupby("Kernel Name")["gpu__time_duration.sum"].agg(["sum", "count"])
    times.append(time.perf_counter() - t0)
    del df, g
print(f"{times[0]:.4f} {times[1]:.4f}")'
peer() { "$python" -c "$peer_code" "$file" "$1" || die "the pandas peer failed ($python)"; }

ours=() ours_1=() full=() full_fresh=() cols=()
for ((r = 1; r <= rounds; ++r)); do
  ours+=("$(wall "$kernlens" analyze "$file" --format json -o /dev/null)")
  ours_1+=("$(wall "${one_cpu[@]}" "$kernlens" analyze "$file" --format json -o /dev/null)")
  if [[ -n $python ]]; then
    read -r first second <<<"$(peer all)"
    full_fresh+=("$first")
    full+=("$second")
    read -r first second <<<"$(peer usecols)"
    cols+=("$second")
  fi
done
ours=$(median "${ours[@]}")
ours_1=$(median "${ours_1[@]}")
echo "== medians of $rounds interleaved rounds"
row "kernlens analyze --format json" "$ours"
row "kernlens analyze --format json, one CPU" "$ours_1"
if [[ -n $python ]]; then
  version=$("$python" -c 'import pandas; print(pandas.__version__)')
  full=$(median "${full[@]}")
  full_fresh=$(median "${full_fresh[@]}")
  cols=$(median "${cols[@]}")
  row "pandas $version read_csv + groupby, first call of a process" "$full_fresh"
  row "pandas $version read_csv + groupby, warm (compared below)" "$full"
  row "pandas $version read_csv(usecols: 2 columns) + groupby, warm" "$cols"
  ratio() { python3 -c "print(f'{$1 / $2:.1f}x')"; }
  echo "kernlens vs read_csv + groupby: $(ratio "$full" "$ours") ($(ratio "$full" "$ours_1") on one CPU);" \
    "vs the usecols variant: $(ratio "$cols" "$ours") ($(ratio "$cols" "$ours_1") on one CPU)"
else
  echo "pandas not installed: peer skipped"
fi

if [[ -x $bench ]]; then
  json=$(KERNLENS_BENCH_RAW_CSV=$file "${one_cpu[@]}" "$bench" --benchmark_filter='BM_ReadNcuRaw' \
    --benchmark_repetitions=3 --benchmark_format=json 2>/dev/null) || die "$bench failed"
  python3 -c '
import json, sys
runs = [b for b in json.load(sys.stdin)["benchmarks"] if b.get("run_type") == "iteration"]
if not runs or "error_message" in runs[0]:
    sys.exit("no result: " + (runs[0].get("error_message", "") if runs else "no runs"))
for arg, what in (("0", "every metric column"), ("1", "what analyze reads")):
    best = max(b["bytes_per_second"] for b in runs if b["name"].split("/")[1] == arg)
    label = "reader from memory, one CPU: " + what
    print(f"{label:58s} {best / 1e6:10.0f} MB/s")' <<<"$json" || die "cannot read the benchmark's output"
else
  echo "bench_ncu_raw: $bench not built (needs libbenchmark-dev): skipped"
fi

