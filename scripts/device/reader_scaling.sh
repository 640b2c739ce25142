#!/usr/bin/env bash
# Issue 22 on the GPU machine's CPUs: how `kernlens analyze FILE --format json` on an ncu raw
# page, a PyTorch profiler trace and an Nsight Systems SQLite export scales with --threads 1, 2,
# 4, 8, 16: raw pages of 200 MB and 1 GB (scripts/bench/make_big_raw.py, the real Qwen decode
# fixture repeated), a 1 GB trace (scripts/bench/make_big_trace.py, the real H100 llama trace
# repeated) and nsys exports of 1 M and 4 M kernel launches (118 MB, 470 MB:
# scripts/fixtures/make_nsys_fixture.py bench, the real llama export's kernels repeated), made
# here; each file is read once before timing so it is in the page cache. Uses build/devrun
# (scripts/device/make_devrun.sh).
#   scripts/device/reader_scaling.sh OUT        (about 6-8 minutes)
# Env: SIZES (raw page MB, default "200 1000"), TRACE_SIZES (trace MB, default "1000"),
# NSYS_LAUNCHES (default "1000000 4000000"); "" skips a kind. THREADS (default
# "1 2 4 8 16 2@0,1"; N@CPUS pins N threads to CPUS with taskset: the last row is the 2-core
# figure on a quiet host). STEPS=1: also one `--verbose` run at each thread count, its step
# times (the read's parts, the analysis's, the output) into OUT/steps.txt.
set -u
out=${1:?usage: reader_scaling.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=big_inputs.sh
source "$root/scripts/device/big_inputs.sh"
devrun=$root/build/devrun
kernlens=$devrun/kernlens
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=${TMPDIR:-/tmp}/kernlens-reader-scaling
mkdir -p "$out" "$work"
rm -f "$out/steps.txt"
{ nproc; lscpu; cat /proc/loadavg; } > "$out/cpu.txt" 2>&1
[[ -x $kernlens ]] || { echo "no $kernlens: run scripts/device/make_devrun.sh first" | tee "$out/scaling.txt"; exit 2; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# One input at every thread count: medians of 3 runs, the largest peak.
measure() {  # LABEL FILE
  local label=$1 file=$2 bytes base="" threads walls cpus peak t w u s m c
  cat "$file" > /dev/null
  bytes=$(stat -c %s "$file")
  for threads in ${THREADS:-1 2 4 8 16 2@0,1}; do
    local pin=()  # N@CPUS: N threads on those CPUs only (2@0,1: issue 22's 2-core target)
    if [[ $threads == *@* ]]; then pin=(taskset -c "${threads#*@}"); fi
    walls="" cpus="" peak=0
    for _ in 1 2 3; do
      t=$(/usr/bin/time -f '%e %U %S %M' "${pin[@]}" "$kernlens" analyze "$file" --format json -o /dev/null --threads "${threads%@*}" 2>&1 >/dev/null | tail -1)
      read -r w u s m <<< "$t"
      walls+="$w"$'\n'; cpus+="$(awk "BEGIN { print $u + $s }")"$'\n'
      (( m > peak )) && peak=$m
    done
    w=$(printf '%s' "$walls" | median); c=$(printf '%s' "$cpus" | median)
    [[ -z $base ]] && base=$w
    printf '%-12s %-7s %8.3f %8.3f %8.0f %8.2f %9.1f\n' "$label" "$threads" "$w" "$c" \
      "$(awk "BEGIN { print $bytes / 1e6 / $w }")" "$(awk "BEGIN { print $base / $w }")" "$(awk "BEGIN { print $peak / 1024 }")"
    if [[ ${STEPS:-0} == 1 ]]; then
      echo "== $label --threads $threads" >> "$out/steps.txt"
      "${pin[@]}" "$kernlens" analyze "$file" --format json -o /dev/null --verbose --threads "${threads%@*}" >> "$out/steps.txt" 2>&1
    fi
  done
}
{
  printf '%-12s %-7s %8s %8s %8s %8s %9s\n' input threads wall_s cpu_s MB/s speedup peak_MiB
  each_big_input measure "${SIZES-200 1000}" "${TRACE_SIZES-1000}" "${NSYS_LAUNCHES-1000000 4000000}"
} > "$out/scaling.txt" 2>&1
cat "$out/scaling.txt"
