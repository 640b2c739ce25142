#!/usr/bin/env python3
"""Copies of one command run at the same time, copy i pinned to the i-th CPU of --cpus, ROUNDS
rounds: the machine's own scaling for work that shares nothing (no threads, no merges, no
locks; only the cores' caches, memory, page cache and kernel). The copies are forked and
pinned first and let go together. Prints the medians of the batch's wall clock (from the
start to the last exit), of one copy's wall clock and of the CPU time (user + system) a copy,
from each child's own rusage (os.wait4). "{i}" in the command becomes the copy's number (0, 1,
...): each copy can read a file of its own, so that the copies share no page of input either.

    scripts/bench/run_together.py --cpus 0-15 -- kernlens analyze FILE --format json -o /dev/null --threads 1
    scripts/bench/run_together.py --cpus 0-15 -- kernlens analyze part.{i}.csv --format json -o /dev/null --threads 1
Env: ROUNDS (default 5).
"""
import argparse
import os
import statistics
import sys
import time


def cpu_list(text):
    """'0-3,8' -> [0, 1, 2, 3, 8], as taskset -c reads it."""
    cpus = []
    for item in text.split(","):
        first, _, last = item.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def one_round(cpus, command):
    """Every copy forked and pinned first, then all let go at once through one pipe: a copy's
    wall clock is from that moment to its exit, not from when Python got round to starting it."""
    gate_read, gate_write = os.pipe()
    pids = []
    for copy, cpu in enumerate(cpus):
        argv = [arg.replace("{i}", str(copy)) for arg in command]
        pid = os.fork()
        if pid == 0:
            try:
                os.close(gate_write)
                os.sched_setaffinity(0, {cpu})
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
                os.read(gate_read, 1)
                os.execvp(argv[0], argv)
            finally:
                os._exit(127)
        pids.append(pid)
    os.close(gate_read)
    start = time.perf_counter()
    os.write(gate_write, b"x" * len(pids))
    os.close(gate_write)
    walls, cpu_times, failed = [], [], []
    for _ in pids:
        pid, status, usage = os.wait4(-1, 0)
        walls.append(time.perf_counter() - start)
        cpu_times.append(usage.ru_utime + usage.ru_stime)
        if os.waitstatus_to_exitcode(status) != 0:
            failed.append(os.waitstatus_to_exitcode(status))
    if failed:
        sys.exit(f"run_together.py: {' '.join(command)} exited {failed[0]}")
    return time.perf_counter() - start, walls, cpu_times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpus", required=True, help="one copy a CPU, e.g. 0-15 or 2")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no command")
    cpus = cpu_list(args.cpus)
    batches, walls, cpu_times = [], [], []
    for _ in range(int(os.environ.get("ROUNDS", "5"))):
        batch, w, c = one_round(cpus, command)
        batches.append(batch)
        walls.extend(w)
        cpu_times.extend(c)
    print(f"{len(cpus):2d} copies on CPUs {args.cpus:6s} batch wall median {statistics.median(batches):.4f} s  "
          f"copy wall median {statistics.median(walls):.4f} s  copy cpu median {statistics.median(cpu_times):.4f} s  "
          f"min {min(cpu_times):.4f}")


if __name__ == "__main__":
    main()
