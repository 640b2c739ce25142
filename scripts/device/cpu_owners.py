#!/usr/bin/env python3
"""Who had each CPU while a parallel `kernlens analyze` ran, from `perf script -F comm,tid,cpu,time`
of a system-wide `perf record -a -e cpu-clock -F HZ` (idle CPUs sample as swapper): per --bin-ms,
the CPUs kernlens ran on, the idle ones, the ones other tasks held, and the ones with no sample
at all (the host ran something else on them: steal), from kernlens's first sample to its last.
  perf script -F comm,tid,cpu,time -i perf.data | cpu_owners.py --hz 5000 --cpus 16"""
import argparse
import collections
import re
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hz", type=float, default=5000)
    ap.add_argument("--bin-ms", type=float, default=2)
    ap.add_argument("--cpus", type=int, default=16)
    args = ap.parse_args()
    line_re = re.compile(r"^\s*(\S.*?)\s+(\d+)\s+\[(\d+)\]\s+(\d+\.\d+):")
    samples = []
    for line in sys.stdin:
        m = line_re.match(line)
        if m:
            samples.append((m.group(1), int(m.group(3)), float(m.group(4))))
    mine = [t for comm, _, t in samples if comm.startswith("kernlens")]
    if not mine:
        print("no kernlens samples")
        return
    t0, t1 = min(mine), max(mine)
    per_bin = args.hz * args.bin_ms / 1000  # samples a CPU gives a bin
    bins = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    for comm, cpu, t in samples:
        if t0 <= t <= t1:
            owner = "kernlens" if comm.startswith("kernlens") else "idle" if comm.startswith("swapper") else "other"
            bins[int((t - t0) * 1000 / args.bin_ms)][owner][cpu] += 1
    totals = collections.Counter()
    print(f"{'ms':>7} {'kernlens':>9} {'idle':>6} {'other':>6} {'no sample':>9}   (CPUs, from samples)")
    for b in range(int((t1 - t0) * 1000 / args.bin_ms) + 1):
        row = {o: sum(bins[b][o].values()) / per_bin for o in ("kernlens", "idle", "other")}
        row["none"] = max(0.0, args.cpus - sum(row.values()))
        for o, v in row.items():
            totals[o] += v
        print(f"{b * args.bin_ms:7.1f} {row['kernlens']:9.1f} {row['idle']:6.1f} {row['other']:6.1f} {row['none']:9.1f}")
    n = int((t1 - t0) * 1000 / args.bin_ms) + 1
    print(f"mean over {n} bins: kernlens {totals['kernlens'] / n:.2f}, idle {totals['idle'] / n:.2f}, "
          f"other {totals['other'] / n:.2f}, no sample {totals['none'] / n:.2f} CPUs")


if __name__ == "__main__":
    main()
