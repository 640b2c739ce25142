#!/usr/bin/env python3
"""Writes kernel-name files for the `kernlens names` benchmark (bench/names_vs_cxxfilt.sh).

From the real mangled names of tests/fixtures/names (ncu --print-kernel-base mangled):
  OUT/mangled_distinct.txt  N distinct names: each fixture name with a clone suffix ".K"
                            (which demanglers read), round robin, as bench/bench_names.cpp makes
                            them: the worst case for a cache
  OUT/mangled_launches.txt  N names drawn from the fixture names as a profile's launches repeat
                            them (a fixed pseudo-random sequence): what `names` reads when fed
                            one line per launch of a trace
Only the standard library is used.

  scripts/bench/make_names.py OUT [-n 1000000]
"""
import argparse, glob, os, random

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def fixture_names():
    names = set()
    for path in glob.glob(os.path.join(ROOT, "tests", "fixtures", "names", "*_mangled.txt")):
        with open(path, encoding="utf-8") as f:
            names.update(line.rstrip("\n") for line in f if line.startswith("_Z"))
    return sorted(names)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("-n", type=int, default=1_000_000)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    base = fixture_names()
    if not base:
        raise SystemExit(f"make_names.py: no mangled names under {ROOT}/tests/fixtures/names")
    with open(os.path.join(args.out, "mangled_distinct.txt"), "w", encoding="utf-8") as f:
        written, k = 0, 0
        while written < args.n:
            for name in base:
                if written == args.n:
                    break
                f.write(f"{name}.{k}\n")
                written += 1
            k += 1
    rng = random.Random(22)
    with open(os.path.join(args.out, "mangled_launches.txt"), "w", encoding="utf-8") as f:
        for _ in range(args.n):
            f.write(base[rng.randrange(len(base))] + "\n")
    print(f"{args.out}: {args.n} names each, from {len(base)} distinct fixture names")


if __name__ == "__main__":
    main()
