#!/usr/bin/env python3
"""What a run did in given windows of its time (issue 22's serial stretches): reads the samples
with call stacks that `DWARF=1 scripts/device/busy_timeline.sh` keeps (LABEL.dwarf.txt.xz, `perf
script -F tid,time,ip,sym` of a `perf record --call-graph dwarf` run) and prints, for each window
in ms from the first sample, the CPUs busy, the threads seen and the commonest (leaf function,
first kernlens caller) pairs. A lambda run through std::function is named by the function that
made it.
  scripts/device/stack_windows.py FILE.dwarf.txt.xz [--hz 4000] [--top 10] FROM-TO [FROM-TO ...]
"""
import argparse
import collections
import lzma
import re

HEADER = re.compile(r"\s*(\d+)\s+([\d.]+):")
LAMBDA = (re.compile(r"_Invoker<std::tuple<(.*?)::\{lambda"), re.compile(r"_Function_handler<[^,]*, (.*?)::\{lambda"))


def samples(path):
    """(time s, tid, frames leaf first) for each sample."""
    cur = None
    with lzma.open(path, "rt", errors="replace") as f:
        for line in f:
            if not line.strip():
                if cur:
                    yield cur
                cur = None
                continue
            m = HEADER.match(line)
            if m and not line.startswith("\t"):
                cur = (float(m.group(2)), int(m.group(1)), [])
            elif cur is not None:
                parts = line.strip().split(None, 1)
                cur[2].append(parts[1] if len(parts) > 1 else "?")
    if cur:
        yield cur


def name(symbol):
    symbol = symbol.replace("(anonymous namespace)", "anon")
    for pattern in LAMBDA:
        m = pattern.search(symbol)
        if m:
            return "lambda in " + m.group(1)[-80:]
    return re.sub(r"\(.*", "", symbol)[:80]


def first_caller(frames):
    for frame in frames[1:]:
        if "kernlens" in frame and not any(s in frame for s in ("run_parallel", "ParkedThreads", "run_in_chunks")):
            return name(frame)
    return "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("windows", nargs="+", help="FROM-TO in ms from the first sample")
    ap.add_argument("--hz", type=float, default=4000, help="the sampling rate of the record (busy_timeline.sh: 4000)")
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    all_samples = list(samples(args.file))
    if not all_samples:
        raise SystemExit(f"stack_windows.py: no samples in {args.file}")
    t0 = min(s[0] for s in all_samples)
    for window in args.windows:
        begin, end = map(float, window.split("-"))
        counts, tids, n = collections.Counter(), set(), 0
        for t, tid, frames in all_samples:
            if begin <= (t - t0) * 1000 < end and frames:
                n += 1
                tids.add(tid)
                counts[(name(frames[0]), first_caller(frames))] += 1
        cpus = n / ((end - begin) / 1000) / args.hz if end > begin else 0
        print(f"== {begin:g}-{end:g} ms: {n} samples, {cpus:.1f} CPUs busy, {len(tids)} threads")
        for (leaf, caller), v in counts.most_common(args.top):
            print(f"  {v:5d} {leaf[:70]} <- {caller[-80:]}")


if __name__ == "__main__":
    main()
