#!/usr/bin/env python3
"""Independent check of `kernlens analyze` on Nsight Compute CSV exports.

Recomputes, with Python's csv module and exact decimals (no code shared with kernlens),
each file's kernel time, launch count and per-kernel totals, then compares them with
`kernlens analyze FILE --format json` to the nanosecond.

    check_ncu_totals.py --kernlens build/kernlens tests/fixtures/ncu/*.csv*
"""
import collections
import csv
import gzip
import io
import sys
from decimal import Decimal

from kernel_totals import compare_kernels, main

# Duration units Nsight Compute prints, in ns (current and older spellings).
NS_PER_UNIT = {"ns": 1, "nsecond": 1, "us": 1000, "usecond": 1000, "ms": 10**6,
               "msecond": 10**6, "s": 10**9, "second": 10**9}


def read_rows(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8-sig")
    lines = [l for l in text.splitlines() if not (l.startswith("==") and "==" in l[2:])]
    start = next(i for i, l in enumerate(lines) if '"Kernel Name"' in l or "Kernel Name" in l.split(","))
    return list(csv.reader(io.StringIO("\n".join(lines[start:]))))


def decimal(cell):
    return Decimal(cell.split(" (")[0].replace(",", ""))


def totals_raw(rows):
    header, units = rows[0], rows[1]
    col = header.index("gpu__time_duration.sum")
    name = header.index("Kernel Name")
    factor = NS_PER_UNIT[units[col]]
    per_kernel = collections.defaultdict(lambda: [Decimal(0), 0])
    for r in rows[2:]:
        if len(r) != len(header):
            continue  # a truncated last row
        per_kernel[r[name]][0] += decimal(r[col]) * factor
        per_kernel[r[name]][1] += 1
    return per_kernel


def totals_details(rows):
    h = {n: i for i, n in enumerate(rows[0])}
    per_launch = {}
    for r in rows[1:]:
        if len(r) <= h["Metric Value"] or r[h["Metric Name"]] != "Duration":
            continue
        if r[h["Section Name"]] != "GPU Speed Of Light Throughput":
            continue
        per_launch.setdefault(r[h["ID"]], (r[h["Kernel Name"]],
                                           decimal(r[h["Metric Value"]]) * NS_PER_UNIT[r[h["Metric Unit"]]]))
    per_kernel = collections.defaultdict(lambda: [Decimal(0), 0])
    for name, ns in per_launch.values():
        per_kernel[name][0] += ns
        per_kernel[name][1] += 1
    return per_kernel


def totals_summary(rows):
    h = {n: i for i, n in enumerate(rows[0])}
    per_kernel = collections.defaultdict(lambda: [Decimal(0), 0])
    for r in rows[1:]:
        if r[h["Metric Name"]] != "Duration":
            continue
        n = int(r[h["Invocations"]].replace(",", ""))
        per_kernel[r[h["Kernel Name"]]][0] += decimal(r[h["Average"]]) * NS_PER_UNIT[r[h["Metric Unit"]]] * n
        per_kernel[r[h["Kernel Name"]]][1] += n
    return per_kernel


def expected_totals(path):
    rows = read_rows(path)
    header = rows[0]
    if "Section Name" in header and "Metric Value" in header:
        return totals_details(rows)
    if "Invocations" in header:
        return totals_summary(rows)
    return totals_raw(rows)


if __name__ == "__main__":
    sys.exit(main(__doc__, lambda doc, path: compare_kernels(doc, expected_totals(path))))
