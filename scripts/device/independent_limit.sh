#!/usr/bin/env bash
# The machine's scaling for kernlens's own work when nothing is shared (issue 22's "near-linear
# scaling"): for each big input of big_inputs.sh, a sixteenth of it read by one process alone
# on CPU 2, then by 16 processes at once, one a CPU (scripts/bench/run_together.py; --threads 1
# each: no threads, merges or locks of ours, only the cores' caches, memory, page cache and
# kernel shared; each copy reads a copy of the part of its own, as 16 threads read 16 different
# sixteenths, not one that the last level cache could keep for all), beside the whole input
# read by one process on --threads 1 (CPU 2) and --threads 16 (scripts/bench/compare_builds.py).
# 16 × alone / together is what 16 cores give this work at best; the reader's 16-thread
# speed-up is set beside it. Uses build/devrun (scripts/device/make_devrun.sh).
#   scripts/device/independent_limit.sh OUT          (about 3 minutes)
# Env: ROUNDS (default 5), COPIES (default 16), ALONE_CPU (default 2), RAW_MB (default 1000), TRACE_MB (default 1000),
#      NSYS_LAUNCHES (default 1000000); "" skips an input. KERNLENS: another binary in build/devrun.
set -u
out=${1:?usage: independent_limit.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=big_inputs.sh
source "$root/scripts/device/big_inputs.sh"
devrun=$root/build/devrun
kernlens=$devrun/${KERNLENS:-kernlens}
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=${TMPDIR:-/tmp}/kernlens-independent-limit
copies=${COPIES:-16} alone=${ALONE_CPU:-2}
mkdir -p "$out" "$work"
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread"; cat /proc/loadavg; } > "$out/cpu.txt" 2>&1

whole_and_together() {  # LABEL FILE: the whole input on 1 and $copies threads, a part of it alone and together
  local label=$1 file=$2 part=$work/part.${2##*.}
  local analyze=(analyze --format json -o /dev/null)
  cat "$file" > /dev/null
  echo "== $label ($(stat -c %s "$file") bytes) --threads 1 on CPU 2, then --threads $copies"
  ROUNDS=${ROUNDS:-5} taskset -c "$alone" python3 "$root/scripts/bench/compare_builds.py" "$kernlens" "${analyze[@]}" "$file" --threads 1
  ROUNDS=${ROUNDS:-5} python3 "$root/scripts/bench/compare_builds.py" "$kernlens" "${analyze[@]}" "$file" --threads "$copies"
  rm -f "$file"
  case $label in
    raw*) python3 "$root/scripts/bench/make_big_raw.py" -s "$(awk "BEGIN { print ${label//[!0-9]/} / $copies }")" -o "$part" > /dev/null ;;
    trace*) python3 "$root/scripts/bench/make_big_trace.py" -s "$(awk "BEGIN { print ${label//[!0-9]/} / $copies }")" -o "$part" > /dev/null ;;
    nsys*) make_nsys_export "$(( ${label//[!0-9]/} * 1000 / copies ))" "$part" ;;
  esac
  local i own=$work/part.{i}.${2##*.}
  for ((i = 0; i < copies; i++)); do cp "$part" "${own/\{i\}/$i}"; done  # pages of its own, in the page cache
  rm -f "$part"
  echo "-- a ${copies}th of it ($(stat -c %s "${own/\{i\}/0}") bytes), --threads 1: alone, then $copies at once, each on a copy of its own"
  ROUNDS=${ROUNDS:-5} python3 "$root/scripts/bench/run_together.py" --cpus "$alone" -- "$kernlens" "${analyze[@]}" "$own" --threads 1
  ROUNDS=${ROUNDS:-5} python3 "$root/scripts/bench/run_together.py" --cpus "0-$((copies - 1))" -- "$kernlens" "${analyze[@]}" "$own" --threads 1
  rm -f "$work"/part.*
}
{
  echo "== a process's start and exit"
  ROUNDS=${ROUNDS:-5} python3 "$root/scripts/bench/run_together.py" --cpus "$alone" -- "$kernlens" --version
  ROUNDS=${ROUNDS:-5} python3 "$root/scripts/bench/run_together.py" --cpus "0-$((copies - 1))" -- "$kernlens" --version
  each_big_input whole_and_together "${RAW_MB-1000}" "${TRACE_MB-1000}" "${NSYS_LAUNCHES-1000000}"
} > "$out/independent.txt" 2>&1
rm -rf "$work"
cat "$out/independent.txt"
