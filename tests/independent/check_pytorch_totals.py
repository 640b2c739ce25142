#!/usr/bin/env python3
"""Independent check of `kernlens analyze` on PyTorch profiler traces.

Recomputes, with Python's json, gzip and decimal modules (no code shared with kernlens),
each trace's kernel time, launch count, per-kernel launches and nanoseconds, memory
operations, and the launches of every stage (record_function ranges, brute force: a kernel
is in every range open on its launching thread when its CUDA call ran), then compares them
with `kernlens analyze FILE --format json`, to the nanosecond. With --key-averages, also
checks the launches of every kernel that PyTorch's own key_averages() table names in full.

    check_pytorch_totals.py --kernlens build/kernlens tests/fixtures/pytorch/*.json.gz
"""
import argparse
import collections
import gzip
import json
import re
import sys
from decimal import Decimal

from kernel_totals import analyze, compare_kernels, differs, report

GPU_OPS = {"gpu_memcpy": "memcpy", "gpu_memset": "memset"}


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw, parse_float=Decimal)  # "ts"/"dur" as written: exact


def ns(us):
    return Decimal(us) * 1000


def stage_name(name):
    return "ProfilerStep" if re.fullmatch(r"ProfilerStep#\d+", name) else name


def stage_launches(events, kernels):
    """Launches per stage path prefix, from the CPU side of record_function ranges."""
    calls = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            calls.setdefault(e["args"]["correlation"], (e["pid"], e["tid"], ns(e["ts"])))
    ranges = [(e["pid"], e["tid"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), stage_name(e["name"]))
              for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    counts = collections.Counter()
    for k in kernels:
        call = calls.get(k["args"].get("correlation"))
        if not call:
            continue
        pid, tid, ts = call
        around = sorted((r for r in ranges if r[:2] == (pid, tid) and r[2] <= ts < r[3]), key=lambda r: (r[2], -r[3]))
        for depth in range(1, len(around) + 1):
            counts["/".join(r[4] for r in around[:depth])] += 1
    return counts


def expected(path):
    events = load(path)["traceEvents"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    per_kernel = collections.defaultdict(lambda: [Decimal(0), 0])
    for k in kernels:
        per_kernel[k["name"]][0] += ns(k["dur"])
        per_kernel[k["name"]][1] += 1
    ops = collections.defaultdict(lambda: [Decimal(0), 0, 0])
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in GPU_OPS:
            op = ops[(e["name"], GPU_OPS[e["cat"]])]
            op[0] += ns(e["dur"])
            op[1] += 1
            op[2] += e["args"]["bytes"]
    return per_kernel, ops, stage_launches(events, kernels)


def check(kernlens, path):
    doc, failure = analyze(kernlens, path)
    if failure:
        return [failure], None
    per_kernel, ops, stages = expected(path)
    errors = compare_kernels(doc, per_kernel)
    got_ops = {(m["name"], m["kind"]): (m["total_ns"], m["count"], m.get("bytes")) for m in doc.get("memory_ops", [])}
    for key, (t, n, b) in ops.items():
        if key not in got_ops or differs(got_ops[key][0], t) or got_ops[key][1:] != (n, b):
            errors.append(f"memory op {key}: {got_ops.get(key)} != ({t}, {n}, {b})")
    if len(got_ops) != len(ops):
        errors.append(f"{len(got_ops)} memory ops, expected {len(ops)}")
    rows = {s["name"]: s["launches"] for s in doc["stages"]}
    if rows.pop("(whole run)", None) != sum(n for _, n in per_kernel.values()):
        errors.append("the (whole run) stage does not hold every launch")
    if rows != dict(stages):
        errors.append(f"stage launches {rows} != {dict(stages)}")
    return errors, {k["name"]: (k["total_ns"], k["launches"]) for k in doc["kernels"]}


def check_key_averages(table, got):
    """Kernels whose names key_averages() prints whole: the same launches and time (us)."""
    errors, seen = [], 0
    for line in open(table):
        m = re.match(r"\s*(\S.*?)\s+0\.00%\s+0\.000us\s+0\.00%\s+0\.000us\s+0\.000us\s+(\S+)\s.*\s(\d+)\s*$", line)
        if not m or m.group(1).endswith("...") or m.group(1) not in got:
            continue
        seen += 1
        value, unit = re.match(r"([\d.]+)(us|ms|s)", m.group(2)).groups()
        printed = Decimal(value) * {"us": 1000, "ms": 10**6, "s": 10**9}[unit]
        total_ns, launches = got[m.group(1)]
        places = len(value.split(".")[1]) if "." in value else 0
        half_digit = Decimal(5) * {"us": 1000, "ms": 10**6, "s": 10**9}[unit] / Decimal(10) ** (places + 1)
        if launches != int(m.group(3)) or abs(Decimal(repr(total_ns)) - printed) > half_digit:
            errors.append(f"key_averages {m.group(1)[:60]}: {m.group(2)} x {m.group(3)} != {total_ns} ns x {launches}")
    if seen == 0:
        errors.append("no kernel of the key_averages table matched")
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernlens", required=True)
    parser.add_argument("--key-averages", nargs=2, metavar=("TABLE", "TRACE"),
                        help="PyTorch's key_averages() table of TRACE (one of the files)")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    failed = 0
    for path in args.files:
        errors, got = check(args.kernlens, path)
        if args.key_averages and path == args.key_averages[1] and got is not None:
            errors += check_key_averages(args.key_averages[0], got)
        failed += report(path, errors)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
