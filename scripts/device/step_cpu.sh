#!/usr/bin/env bash
# Issue 22: which steps of `kernlens analyze` spend more CPU on many threads than on one, from
# `--verbose`'s per-step wall and CPU times: the nsys export of NSYS_LAUNCHES kernels at each of
# THREADS, ROUNDS times (interleaved), and a sixteenth of it read by one process alone and by
# 16 (at most the CPUs) one-thread processes at once, each on a copy of its own (scripts/bench/run_together.py):
# the same steps without threads. One file a run in OUT (n.rR.tT.txt, alone.R.txt,
# together.R.I.txt); OUT/step_cpu.txt has the wall and peak of each run. Uses build/devrun
# (scripts/device/make_devrun.sh).
#   scripts/device/step_cpu.sh OUT          (about 2 minutes at 8 M launches on 16 CPUs)
# Env: NSYS_LAUNCHES (default 8000000), THREADS (default "1 2 16"), ROUNDS (default 2).
set -u
out=${1:?usage: step_cpu.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=big_inputs.sh
source "$root/scripts/device/big_inputs.sh"
use_devrun
kernlens=$devrun/kernlens
launches=${NSYS_LAUNCHES:-8000000} copies=$(( $(nproc) < 16 ? $(nproc) : 16 ))
alone=$(( $(nproc) > 2 ? 2 : 0 ))
work=${TMPDIR:-/tmp}/kernlens-step-cpu
mkdir -p "$out" "$work"
{
  echo "== $(date +%T) $(nproc) CPUs; stat: $(head -1 /proc/stat)"
  make_nsys_export $((launches / copies)) "$work/part.sqlite"
  for ((i = 0; i < copies; i++)); do cp "$work/part.sqlite" "$work/part.$i.sqlite"; done
  cat "$work"/part.*.sqlite > /dev/null
  for ((r = 1; r <= ${ROUNDS:-2}; r++)); do
    ROUNDS=1 python3 "$root/scripts/bench/run_together.py" --cpus "$alone" -- sh -c \
      "$kernlens analyze $work/part.0.sqlite --format json -o /dev/null --threads 1 --verbose 2> $out/alone.$r.txt"
    ROUNDS=1 python3 "$root/scripts/bench/run_together.py" --cpus "0-$((copies - 1))" -- sh -c \
      "$kernlens analyze $work/part.{i}.sqlite --format json -o /dev/null --threads 1 --verbose 2> $out/together.$r.{i}.txt"
  done
  rm -f "$work"/part*.sqlite
  make_nsys_export "$launches" "$work/n.sqlite"
  cat "$work/n.sqlite" > /dev/null
  for ((r = 1; r <= ${ROUNDS:-2}; r++)); do
    for t in ${THREADS:-1 2 16}; do
      /usr/bin/time -f "%e s wall, %U s user, %S s sys, peak %M KiB" "$kernlens" analyze "$work/n.sqlite" \
        --format json -o /dev/null --threads "$t" --verbose 2> "$out/n.r$r.t$t.txt"
      echo "round $r, --threads $t: $(tail -1 "$out/n.r$r.t$t.txt")"
    done
  done
  echo "== $(date +%T); stat: $(head -1 /proc/stat)"
} > "$out/step_cpu.txt" 2>&1
rm -rf "$work"
cat "$out/step_cpu.txt"
