#!/usr/bin/env bash
# Two or more kernlens builds side by side on the GPU machine's CPUs (issue 22): `kernlens analyze FILE
# --format json` on a 1 GB PyTorch trace (scripts/bench/make_big_trace.py), an nsys export
# of a million kernels (scripts/fixtures/make_nsys_fixture.py bench) and, when RAW_MB names
# sizes, ncu raw pages (scripts/bench/make_big_raw.py), at several --threads,
# the builds interleaved round by round (scripts/bench/compare_builds.py: wall and CPU
# medians) and each build's largest peak RSS (/usr/bin/time). Both outputs must be the same
# JSON (md5). build/devrun holds the new build (scripts/device/make_devrun.sh); OLD is another
# kernlens binary carried beside it, or several, comma-separated (oldest first).
#   scripts/device/compare_reader_builds.sh OUT OLD_BIN[,OLD_BIN...]     (about 4 minutes)
# Env: THREADS (default "1 2@0,1 16"; N@CPUS pins to CPUS with taskset), ROUNDS (default 5),
#      RAW_MB (default ""), TRACE_MB (default 1000), NSYS_LAUNCHES (default 1000000); "" skips an input.
set -u
out=${1:?usage: compare_reader_builds.sh OUT OLD_BIN}
old=${2:?usage: compare_reader_builds.sh OUT OLD_BIN}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=big_inputs.sh
source "$root/scripts/device/big_inputs.sh"
devrun=$root/build/devrun
new=$devrun/kernlens
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=${TMPDIR:-/tmp}/kernlens-compare-builds
mkdir -p "$out" "$work"
{ nproc; lscpu | head -20; cat /proc/loadavg; } > "$out/cpu.txt" 2>&1
IFS=, read -r -a builds <<< "$old,$new"
for bin in "${builds[@]}"; do
  [[ -x $bin ]] || { echo "need $bin" | tee "$out/compare.txt"; exit 2; }
done

compare() {  # LABEL FILE
  local label=$1 file=$2 threads pin bin
  cat "$file" > /dev/null
  for threads in ${THREADS:-1 2@0,1 16}; do
    pin=()
    [[ $threads == *@* ]] && pin=(taskset -c "${threads#*@}")
    echo "== $label --threads $threads ($(stat -c %s "$file") bytes)"
    ROUNDS=${ROUNDS:-5} "${pin[@]}" python3 "$root/scripts/bench/compare_builds.py" "$old,$new" \
      analyze "$file" --format json -o /dev/null --threads "${threads%@*}"
    for bin in "${builds[@]}"; do
      printf '%-40s peak %7.1f MiB\n' "$bin" "$(peak_mib "$bin" "$file" "$threads")"
    done
  done
  for bin in "${builds[@]}"; do
    echo "md5 $(json_md5 "$bin" "$file") $bin"
  done
}
{
  each_big_input compare "${RAW_MB-}" "${TRACE_MB-1000}" "${NSYS_LAUNCHES-1000000}"
} > "$out/compare.txt" 2>&1
cat "$out/compare.txt"
