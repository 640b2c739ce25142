#!/usr/bin/env python3
"""Independent check of the per-kernel figures `kernlens analyze` gives on Nsight Compute raw
pages (`ncu --page raw --csv`, base or prefixed units).

Recomputes, with Python's csv module and exact decimals (no code shared with kernlens), each
kernel's time-weighted mean of every throughput, occupancy and clock figure below: for each
launch the first of the figure's metric names that has a value, weighted by the launch's
gpu__time_duration.sum; then compares them with the "metrics" of each kernel in
`kernlens analyze FILE --format json` (relative difference under 1e-9), and says which figures
kernlens gives that the file does not hold, or misses.

    check_ncu_figures.py --kernlens build/kernlens tests/fixtures/ncu/*raw*.csv*
"""
import collections
import sys
from decimal import Decimal

from check_ncu_totals import NS_PER_UNIT, read_rows
from kernel_totals import main

# Each figure's metric names, preferred first, as Nsight Compute 2022-2025.3 spell them in a
# raw page. Written out here from ncu's metric names, not read from kernlens.
FIGURES = {
    "sm_pct": ["sm__throughput.avg.pct_of_peak_sustained_elapsed"],
    "memory_pct": ["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"],
    "dram_pct": ["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                 "dram__throughput.avg.pct_of_peak_sustained_elapsed"],
    "l1_pct": ["l1tex__throughput.avg.pct_of_peak_sustained_active"],
    "l2_pct": ["lts__throughput.avg.pct_of_peak_sustained_elapsed"],
    "l1_hit_pct": ["l1tex__t_sector_hit_rate.pct"],
    "l2_hit_pct": ["lts__t_sector_hit_rate.pct"],
    "achieved_occupancy_pct": ["sm__warps_active.avg.pct_of_peak_sustained_active"],
    "theoretical_occupancy_pct": ["sm__maximum_warps_per_active_cycle_pct"],
    "waves_per_sm": ["launch__waves_per_multiprocessor"],
    "tensor_pipe_pct": ["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
                        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"],
    "sm_clock_hz": ["sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second"],
    "dram_clock_hz": ["dram__cycles_elapsed.avg.per_second"],
}

# Units a raw page prints: base units, and the prefixed ones of ncu's default (dynamic) units.
UNIT_SCALE = {"": 1, "%": 1, "hz": 1, "khz": 10**3, "mhz": 10**6, "ghz": 10**9,
              "byte": 1, "kbyte": 10**3, "mbyte": 10**6, "gbyte": 10**9, "tbyte": 10**12,
              "byte/second": 1, "kbyte/second": 10**3, "mbyte/second": 10**6, "gbyte/second": 10**9,
              "tbyte/second": 10**12}


def number(cell):
    """The cell's value, or None when it holds none ("", "n/a", text)."""
    cell = cell.split(" (")[0].replace(",", "").strip()
    try:
        return Decimal(cell)
    except ArithmeticError:
        return None


def expected_figures(path):
    """{kernel name: {figure: Decimal}} and the units that are not base units."""
    rows = read_rows(path)
    header, units = next(rows), next(rows)
    col = {n: i for i, n in reversed(list(enumerate(header)))}  # the first of duplicate names
    duration = col["gpu__time_duration.sum"]
    ns_per_unit = NS_PER_UNIT[units[duration]]
    odd_units = sorted({units[i] for i in range(len(header)) if units[i].lower() not in UNIT_SCALE
                        and any(header[i] in names for names in FIGURES.values())})
    sums = collections.defaultdict(lambda: collections.defaultdict(lambda: [Decimal(0), Decimal(0)]))
    bytes_moved = {}
    for r in rows:
        if len(r) != len(header):
            continue  # a truncated last row
        w = number(r[duration])
        if w is None or w <= 0:
            continue
        w *= ns_per_unit
        kernel = r[col["Kernel Name"]]
        def cell(n):
            v = number(r[col[n]]) if n in col else None
            return None if v is None else v * UNIT_SCALE.get(units[col[n]].lower(), 1)

        # DRAM bytes are summed, not averaged: the total, else read + write, else the rate x time.
        total, read, write, rate = (cell(n) for n in ("dram__bytes.sum", "dram__bytes_read.sum",
                                                      "dram__bytes_write.sum", "dram__bytes.sum.per_second"))
        moved = total if total is not None else (read + write if read is not None and write is not None
                                                 else (rate * w / 10**9 if rate is not None else None))
        if moved is not None:
            bytes_moved[kernel] = bytes_moved.get(kernel, 0) + moved
        for figure, names in FIGURES.items():
            for n in names:
                v = cell(n)
                if v is not None:
                    s = sums[kernel][figure]
                    s[0] += v * w
                    s[1] += w
                    break
    means = {k: {f: s / w for f, (s, w) in figs.items()} for k, figs in sums.items()}
    for k, b in bytes_moved.items():
        means.setdefault(k, {})["dram_bytes"] = b
    return means, odd_units


def close(got, want):
    return abs(Decimal(repr(got)) - want) <= Decimal("1e-9") * max(abs(want), Decimal(1))


def check(doc, path):
    want, odd_units = expected_figures(path)
    if odd_units:
        return [f"units this check does not know: {odd_units}"]
    errors, compared = [], 0
    for k in doc["kernels"]:
        name = k.get("mangled_name", k["name"])
        expected = want.get(name, {})
        got = k.get("metrics", {})
        for figure in sorted(set(expected) | (set(got) & (set(FIGURES) | {"dram_bytes"}))):
            if figure not in got:
                errors.append(f"{name[:60]}: {figure} missing (expected {expected[figure]:.6g})")
            elif figure not in expected:
                errors.append(f"{name[:60]}: {figure} {got[figure]} given, but no launch has it")
            elif not close(got[figure], expected[figure]):
                errors.append(f"{name[:60]}: {figure} {got[figure]!r} != {expected[figure]:.15g}")
            else:
                compared += 1
    if compared == 0 and not errors:
        errors.append("no figure to compare: is this a raw page with metrics?")
    if not errors:
        print(f"     {compared} figures of {len(doc['kernels'])} kernels agree")
    return errors


if __name__ == "__main__":
    sys.exit(main(__doc__, check))
