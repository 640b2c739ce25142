#!/usr/bin/env python3
"""How many CPUs a process kept busy over its life, from `perf script -F tid,time,ip,sym`
output of a `perf record -F HZ` run (cpu-clock samples): per --bin-ms, the CPUs busy (samples /
(HZ * bin)), the threads seen and the functions most sampled then. A bin of one CPU between
bins of sixteen is a stretch where a parallel run waits on one thread.
  perf script -F tid,time,ip,sym -i perf.data | busy_timeline.py --hz 10000 --bin-ms 2"""
import argparse
import collections
import re
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hz", type=float, default=10000, help="perf record's -F (default 10000)")
    ap.add_argument("--bin-ms", type=float, default=2, help="bin width in ms (default 2)")
    ap.add_argument("--top", type=int, default=3, help="functions shown a bin (default 3)")
    args = ap.parse_args()
    sample = re.compile(r"^\s*(\d+)\s+(\d+\.\d+):\s*(?:[0-9a-f]+\s+)?(.*)$")
    bins = collections.defaultdict(collections.Counter)
    threads = collections.defaultdict(set)
    t0 = None
    for line in sys.stdin:
        m = sample.match(line)
        if not m:
            continue
        tid, t, sym = int(m.group(1)), float(m.group(2)), m.group(3).strip()
        sym = re.sub(r"\(anonymous namespace\)::", "", sym)
        sym = re.sub(r"\(.*", "", sym)[:60] or "?"
        t0 = t if t0 is None else t0
        b = int((t - t0) * 1000 / args.bin_ms)
        bins[b][sym] += 1
        threads[b].add(tid)
    per_cpu = args.hz * args.bin_ms / 1000
    for b in sorted(bins):
        top = ", ".join(f"{s} {k}" for s, k in bins[b].most_common(args.top))
        print(f"{b * args.bin_ms:7.1f} ms  {sum(bins[b].values()) / per_cpu:5.1f} CPUs  {len(threads[b]):3d} thr  {top}")


if __name__ == "__main__":
    main()
