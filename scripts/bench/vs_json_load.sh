#!/usr/bin/env bash
# Times kernlens against Python's json.load on one big PyTorch profiler trace, side by side in
# one run: ROUNDS rounds (default 3), each timing every contender once, so that a noisy host
# slows all of them alike; medians are reported (the file is in the page cache), wall clock
# and CPU time (user + system: what a busy host inflates least), with each one's peak
# memory (/usr/bin/time -f %M, the largest of the rounds):
#   1. `kernlens analyze FILE --format json -o /dev/null`, wall clock, as users run it (a
#      reading thread and --threads parsers, one per usable CPU), with --threads 1, and
#      pinned to one CPU; the same on FILE.gz;
#   2. the reader alone on one CPU (Google Benchmark, best of 3): from memory, and from the
#      file streamed;
#   3. the peer, Python's json.load of the same file, then the least work that gives
#      kernlens's totals (kernel time and launches per kernel name), timed inside Python
#      (no interpreter start); and orjson.loads the same way when it is installed.
# Installs nothing; makes FILE with scripts/bench/make_big_trace.py and FILE.gz with gzip when
# they are missing.
#
# Usage: scripts/bench/vs_json_load.sh [FILE]
# Env:   ROUNDS, BUILD_DIR (default build/rel; a Release build), KERNLENS_BENCH_TRACE (FILE),
#        PYTHON (default python3).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build/rel}
file=${1:-${KERNLENS_BENCH_TRACE:-$build/bench/big_trace.json}}
kernlens=$build/kernlens
bench=$build/bench/bench_pytorch_trace
python=${PYTHON:-python3}

die() { echo "bench_vs_json_load: $*" >&2; exit 1; }
command -v "$python" >/dev/null || die "$python is needed (the peer, timing arithmetic)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is needed for peak memory (Debian: time)"
[[ -x $kernlens ]] || die "$kernlens not found: build first (cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C $build)"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
[[ $build_type == Release ]] || echo "warning: $build is a '${build_type:-unknown}' build; figures are meant for Release" >&2

if [[ ! -f $file ]]; then
  echo "== $file missing: generating it (500 MB)"
  mkdir -p "$(dirname "$file")"
  "$python" "$root/scripts/bench/make_big_trace.py" -o "$file"
fi
if [[ ! -f $file.gz || $file.gz -ot $file ]]; then
  echo "== $file.gz missing: gzip -1"
  gzip -1 -k -f "$file"
fi
bytes=$(stat -L -c %s "$file")
mb=$("$python" -c "print(f'{$bytes / 1e6:.1f}')")
one_cpu=()
if command -v taskset >/dev/null; then one_cpu=(taskset -c 0); fi
cat "$file" "$file.gz" > /dev/null

echo "== file: $file ($mb MB; .gz $("$python" -c "print(f'{$(stat -L -c %s "$file.gz") / 1e6:.1f}')") MB)"
echo "== machine: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# "WALL_SECONDS CPU_SECONDS KB" of one run: wall clock, user + system time, peak memory.
measure() {
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" > /dev/null 2>&1 || die "failed: $*"
  tail -1 "$tmp/time" | awk '{ print $1, $2 + $3, $4 }'
}
median() { "$python" -c "import statistics, sys; print(f'{statistics.median(map(float, sys.argv[1:])):.3f}')" "$@"; }
most() { "$python" -c "import sys; print(max(map(int, sys.argv[1:])))" "$@"; }
row() {  # label wall-seconds cpu-seconds peak-KB
  "$python" -c "import sys; w, c, kb = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]); \
print(f'{sys.argv[1]:42s} {w:7.3f} s {$bytes / 1e6 / w:5.0f} MB/s  cpu {c:7.3f} s {$bytes / 1e6 / c:5.0f} MB/s' \
      f'  peak {kb / 1024:5.0f} MiB = {kb * 1024 / $bytes:.2f} x file')" "$@"
}

# The peer, timed inside Python; it prints wall and CPU seconds of the load, then of the load
# and the totals: "LOAD_WALL LOAD_CPU TOTAL_WALL TOTAL_CPU".
peer_code='
import collections, importlib, sys, time
module = importlib.import_module(sys.argv[2])
t0, c0 = time.perf_counter(), time.process_time()
with open(sys.argv[1], "rb") as f:
    doc = module.load(f) if hasattr(module, "load") else module.loads(f.read())
t1, c1 = time.perf_counter(), time.process_time()
per_kernel = collections.defaultdict(lambda: [0.0, 0])
for e in doc["traceEvents"]:
    if e.get("cat") == "kernel":
        k = per_kernel[e["name"]]
        k[0] += e["dur"]
        k[1] += 1
t2, c2 = time.perf_counter(), time.process_time()
print(f"{t1 - t0:.4f} {c1 - c0:.4f} {t2 - t0:.4f} {c2 - c0:.4f}")'
peers=(json)
if "$python" -c 'import orjson' 2>/dev/null; then peers+=(orjson); fi

declare -A times cpu mem
add() { times[$1]+=" $2"; cpu[$1]+=" $3"; mem[$1]+=" $4"; }
timed() {  # KEY COMMAND...: measures one run of COMMAND under KEY
  local key=$1 result
  shift
  result=$(measure "$@")
  add "$key" $result
}
rounds=${ROUNDS:-3}
for ((r = 1; r <= rounds; ++r)); do
  timed ours "$kernlens" analyze "$file" --format json -o /dev/null
  timed ours_t1 "$kernlens" analyze "$file" --format json -o /dev/null --threads 1
  timed ours_1 "${one_cpu[@]}" "$kernlens" analyze "$file" --format json -o /dev/null
  timed ours_gz "${one_cpu[@]}" "$kernlens" analyze "$file.gz" --format json -o /dev/null
  for p in "${peers[@]}"; do
    read -r load load_cpu total total_cpu < <(/usr/bin/time -f '%M' -o "$tmp/time" "${one_cpu[@]}" \
      "$python" -c "$peer_code" "$file" "$p") || die "the $p peer failed"
    kb=$(tail -1 "$tmp/time")
    add "${p}_load" "$load" "$load_cpu" "$kb"
    add "${p}_total" "$total" "$total_cpu" "$kb"
  done
done
echo "== medians of $rounds interleaved rounds (peak memory: the largest)"
show() { row "$1" "$(median ${times[$2]})" "$(median ${cpu[$2]})" "$(most ${mem[$2]})"; }
show "kernlens analyze FILE --format json" ours
show "kernlens analyze FILE --threads 1" ours_t1
show "kernlens analyze FILE, one CPU" ours_1
show "kernlens analyze FILE.gz, one CPU" ours_gz
for p in "${peers[@]}"; do
  version=$("$python" -c "import $p; print(getattr($p, '__version__', ''))")
  show "python $p $version load, one CPU" "${p}_load"
  show "python $p load + kernel totals, one CPU" "${p}_total"
done
ratio() { "$python" -c "print(f'{$1 / $2:.1f}x')"; }
echo "kernlens analyze (one CPU) vs json.load alone: $(ratio "$(median ${times[json_load]})" "$(median ${times[ours_1]})")" \
  "faster by the wall clock, $(ratio "$(median ${cpu[json_load]})" "$(median ${cpu[ours_1]})") by CPU time"

if [[ -x $bench ]]; then
  json=$(KERNLENS_BENCH_TRACE=$file "${one_cpu[@]}" "$bench" --benchmark_repetitions=3 --benchmark_format=json 2>/dev/null) ||
    die "$bench failed"
  "$python" -c '
import json, sys
runs = [b for b in json.load(sys.stdin)["benchmarks"] if b.get("run_type") == "iteration"]
if not runs or "error_message" in runs[0]:
    sys.exit("no result: " + (runs[0].get("error_message", "") if runs else "no runs"))
for arg, what in (("0", "from memory"), ("1", "the file, streamed")):
    best = max(b["bytes_per_second"] for b in runs if b["name"].split("/")[1] == arg)
    label = "reader alone, one CPU: " + what
    print(f"{label:46s} {best / 1e6:17.0f} MB/s")' <<<"$json" ||
    die "cannot read the benchmark's output"
else
  echo "bench_pytorch_trace: $bench not built (needs libbenchmark-dev): skipped"
fi
