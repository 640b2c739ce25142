#!/usr/bin/env python3
"""Two or more kernlens builds on the same command, interleaved round by round (every other
round in reverse order), so that a shared machine's drift falls on all of them alike: wall
clock and CPU time (user + system of the child, from getrusage) medians, and the least CPU
time.

    scripts/bench/compare_builds.py OLD_BIN,NEW_BIN analyze FILE --format json -o /dev/null --threads 2
Env: ROUNDS (default 15).
"""
import os
import resource
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    builds, args = sys.argv[1].split(","), sys.argv[2:]
    rounds = int(os.environ.get("ROUNDS", "15"))
    walls = {b: [] for b in builds}
    cpus = {b: [] for b in builds}
    for r in range(rounds):
        # Every other round in reverse order: a build that always ran second (after the other
        # freed its memory, or with the other's pages still cached) would carry that as a bias.
        for b in (builds if r % 2 == 0 else builds[::-1]):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run([b] + args, stdout=subprocess.DEVNULL, check=True)
            walls[b].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[b].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    for b in builds:
        print(f"{b:28s} wall median {statistics.median(walls[b]):.4f} s  "
              f"cpu median {statistics.median(cpus[b]):.4f} s  cpu min {min(cpus[b]):.4f}")


if __name__ == "__main__":
    main()
