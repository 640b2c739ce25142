#!/usr/bin/env python3
"""Sweeps the kernel rules over every capture kernlens ships (issue 14).

Every kernel above 1% of a run's kernel time must have a library and an operation class:
neither library `user` nor op_class `other`, unless it is the profiled program's own code (the
demo programs' kernels, listed below with where they come from). Every name of the public name
lists (tests/fixtures/names/public, kernels of libraries) must have an operation class.

Usage: sweep_classification.py KERNLENS REPO_ROOT
"""
import json
import pathlib
import subprocess
import sys

# Kernels the profiled programs wrote themselves: `user` is right for them.
USER_CODE = {
    "saxpy": "tests/fixtures/nsys saxpy-mpi-cuda and examples/workloads/nvtx_demo.cu",
    "scale": "examples/workloads/nvtx_demo.cu",
    "block_sum": "examples/workloads/nvtx_demo.cu",
    "demo::fill": "examples/workloads/nvtx_demo.cu",
}
SHARE = 0.01


def inputs(root):
    fixtures = root / "tests/fixtures"
    for pattern in ("ncu/*.csv*", "nsys/*.sqlite", "nsys/*.csv", "pytorch/*.json*", "kltrace/*.kltrace"):
        yield from sorted(fixtures.glob(pattern))
    yield from sorted((root / "examples/data/runs").iterdir())
    yield from sorted((root / "examples/data/h100").glob("*.csv*"))


def own_code(base_name):
    # ncu --rename-kernels with NVTX prefixes the range path: "step/scale".
    return base_name.rsplit("/", 1)[-1] in USER_CODE


def main():
    kernlens, root = sys.argv[1], pathlib.Path(sys.argv[2])
    failures = checked = 0
    for path in inputs(root):
        proc = subprocess.run([kernlens, "analyze", "--format", "json", str(path)], capture_output=True, text=True)
        if proc.returncode != 0:
            continue  # not an input (a deliberately broken fixture); its own tests cover it
        doc = json.loads(proc.stdout)
        for k in doc["kernels"]:
            if k.get("share", 0) <= SHARE:
                continue
            checked += 1
            if (k["library"] == "user" or k["op_class"] == "other") and not own_code(k["base_name"]):
                print(f"FAIL {path.relative_to(root)}: {k['share']:.1%} {k['library']}/{k['op_class']} {k['base_name']}")
                failures += 1
    for names in sorted((root / "tests/fixtures/names/public").glob("*.txt")):
        proc = subprocess.run([kernlens, "names", str(names)], capture_output=True, text=True, check=True)
        for line in proc.stdout.splitlines():
            fields = line.split("\t")
            checked += 1
            if len(fields) < 4 or fields[3] == "other":
                print(f"FAIL {names.relative_to(root)}: {line[:160]}")
                failures += 1
    print(f"{checked} kernels checked, {failures} misfiled")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
