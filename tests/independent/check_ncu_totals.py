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
import itertools
import sys
from decimal import Decimal

from kernel_totals import compare_kernels, main

# Duration units Nsight Compute prints, in ns (current and older spellings).
NS_PER_UNIT = {"ns": 1, "nsecond": 1, "us": 1000, "usecond": 1000, "ms": 10**6,
               "msecond": 10**6, "s": 10**9, "second": 10**9}


def read_rows(path):
    """The CSV rows from the header row on, streamed: a page of gigabytes is never held whole."""
    with open(path, "rb") as f:
        opener = gzip.open if f.read(2) == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8-sig", newline="") as f:
        lines = (l for l in f if not (l.startswith("==") and "==" in l[2:]))
        for line in lines:
            if '"Kernel Name"' in line or "Kernel Name" in line.rstrip("\r\n").split(","):
                yield from csv.reader(itertools.chain([line], lines))
                return


def decimal(cell):
    return Decimal(cell.split(" (")[0].replace(",", ""))


def totals_raw(rows):
    header, units = next(rows), next(rows)
    col = header.index("gpu__time_duration.sum")
    name = header.index("Kernel Name")
    factor = NS_PER_UNIT[units[col]]
    per_kernel = collections.defaultdict(lambda: [Decimal(0), 0])
    for r in rows:
        if len(r) != len(header):
            continue  # a truncated last row
        per_kernel[r[name]][0] += decimal(r[col]) * factor
        per_kernel[r[name]][1] += 1
    return per_kernel


def totals_details(header, rows):
    h = {n: i for i, n in enumerate(header)}
    per_launch = {}
    for r in rows:
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


def totals_summary(header, rows):
    h = {n: i for i, n in enumerate(header)}
    per_kernel = collections.defaultdict(lambda: [Decimal(0), 0])
    for r in rows:
        if r[h["Metric Name"]] != "Duration":
            continue
        n = int(r[h["Invocations"]].replace(",", ""))
        per_kernel[r[h["Kernel Name"]]][0] += decimal(r[h["Average"]]) * NS_PER_UNIT[r[h["Metric Unit"]]] * n
        per_kernel[r[h["Kernel Name"]]][1] += n
    return per_kernel


def expected_totals(path):
    rows = read_rows(path)
    header = next(rows)
    if "Section Name" in header and "Metric Value" in header:
        return totals_details(header, rows)
    if "Invocations" in header:
        return totals_summary(header, rows)
    return totals_raw(itertools.chain([header], rows))


if __name__ == "__main__":
    sys.exit(main(__doc__, lambda doc, path: compare_kernels(doc, expected_totals(path))))
