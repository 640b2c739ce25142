#!/usr/bin/env python3
"""The per-step CPU times of scripts/device/step_cpu.sh's runs as one table: for each step of
`kernlens analyze --verbose`, the median CPU seconds at each --threads (n.rR.tT.txt) and, for
the sixteenth parts, one process alone (alone.R.txt) and the median of the copies run together
(together.R.I.txt), with the growth of each against its one-thread figure. Then, from
step_cpu.txt, the whole job's wall clock each way: one process on N threads against 16 (at most
the CPUs) one-thread processes on its sixteenths at once, both over one thread on the whole.

    scripts/device/step_cpu_table.py OUT
"""
import collections
import pathlib
import re
import statistics
import sys

LINE = re.compile(r"^(?P<indent> *)(?P<name>\S.*?)\s+(?P<wall>[\d.]+) s(?:  cpu\s+(?P<cpu>[\d.]+) s)?")


def steps(path):
    """{step name: cpu seconds} of one --verbose output; the parts' count dropped from names."""
    out = {}
    for line in path.read_text().splitlines()[1:]:
        m = LINE.match(line)
        if m and m["cpu"]:
            name = re.sub(r"^read \S+$", "read", re.sub(r", (\d+ parts|on \d+ threads)$", "", m["name"]))
            out["  " * (len(m["indent"]) // 2 - 1) + name] = float(m["cpu"])
    return out


def medians(paths):
    by_step = collections.defaultdict(list)
    order = []
    for p in paths:
        for name, cpu in steps(p).items():
            if name not in by_step:
                order.append(name)
            by_step[name].append(cpu)
    return order, {n: statistics.median(v) for n, v in by_step.items()}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = pathlib.Path(sys.argv[1])
    threads = sorted({int(m[1]) for p in out.glob("n.r*.t*.txt") if (m := re.search(r"\.t(\d+)\.txt$", p.name))})
    columns = [(f"{t} thr", sorted(out.glob(f"n.r*.t{t}.txt"))) for t in threads]
    columns += [("part alone", sorted(out.glob("alone.*.txt"))), ("part, 16 at once", sorted(out.glob("together.*.txt")))]
    columns = [(label, paths) for label, paths in columns if paths]
    if not columns:
        sys.exit(f"step_cpu_table.py: no --verbose outputs in {out}")
    tables = [(label, *medians(paths)) for label, paths in columns]
    cpu_of = {label: cpu for label, _, cpu in tables}
    # Each column against its one-thread figure: the threads' against `--threads 1`, the
    # processes' together against one alone.
    base_of = {label: cpu_of.get("part alone") if label.startswith("part") else cpu_of.get(tables[0][0])
               for label, *_ in tables}
    order = max((t[1] for t in tables), key=len)
    print(f"{'step (CPU s, medians)':46s}" + "".join(f"{label:>18s}" for label, *_ in tables))
    for name in order:
        row = f"{name[:46]:46s}"
        for label, _, cpu in tables:
            base, value = base_of[label], cpu.get(name)
            if value is None:
                row += f"{'':>18s}"
            elif base and base is not cpu and base.get(name, 0) > 0.005:
                row += f"{value:10.3f} {value / base[name] - 1:+6.0%} "
            else:
                row += f"{value:10.3f}        "
        print(row)
    speed_ups(out / "step_cpu.txt")


def speed_ups(log):
    """The median wall of each --threads run and of the processes' batches (run_together.py's
    "batch wall median"), each as a speed-up over one thread on the whole export."""
    if not log.exists():
        return
    walls, batches = collections.defaultdict(list), collections.defaultdict(list)
    for line in log.read_text().splitlines():
        if m := re.match(r"round \d+, --threads (\d+): ([\d.]+) s wall", line):
            walls[int(m[1])].append(float(m[2]))
        elif m := re.match(r"\s*(\d+) copies on CPUs \S+\s+batch wall median ([\d.]+) s", line):
            batches[int(m[1])].append(float(m[2]))
    one = statistics.median(walls[1]) if walls.get(1) else None
    print("\nthe whole job, wall (medians)")
    for t in sorted(walls):
        wall = statistics.median(walls[t])
        print(f"  one process, --threads {t:<3d}         {wall:8.3f} s" + (f"  {one / wall:5.1f}x" if one else ""))
    for copies in sorted(c for c in batches if c > 1):
        wall = statistics.median(batches[copies])
        print(f"  {copies} processes, 1/{copies} each, at once  {wall:8.3f} s" + (f"  {one / wall:5.1f}x" if one else ""))


if __name__ == "__main__":
    main()
