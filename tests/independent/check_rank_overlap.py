#!/usr/bin/env python3
"""Independent check of kernlens's per-rank figures on multi-rank PyTorch traces.

Each argument group (files joined with ',') is one multi-rank profile. With Python's json,
gzip and decimal modules and no code shared with kernlens, recomputes per rank (the trace's
"distributedInfo" rank, else the file's position): the kernel time (the sum of the rank's
kernel durations), its communication time (NCCL/NVSHMEM kernels), and the part of each
communication kernel during which a compute kernel of the same rank ran on the same GPU
(brute force: for each communication kernel, the compute kernels that cross it, clipped and
merged). Compares them with `kernlens analyze FILES --format json`'s "ranks", to the
nanosecond, and checks that the straggler is the rank named with --straggler GROUP=RANK.

    check_rank_overlap.py --kernlens build/kernlens a-rank0.json.gz,a-rank1.json.gz
"""
import argparse
import gzip
import json
import subprocess
import sys
from decimal import Decimal, ROUND_HALF_UP


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw, parse_float=Decimal)


def ns(us):
    # Nanoseconds from microseconds as written, rounded half up (the trace's unit is us).
    return int((Decimal(us) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def is_comm(name):
    low = name.lower()
    return "nccl" in low or "nvshmem" in low


def rank_figures(trace):
    kernels = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
    total = sum(ns(e["dur"]) for e in kernels)
    spans = []
    for e in kernels:
        start = ns(e["ts"])
        device = e.get("args", {}).get("device", e.get("pid"))
        spans.append((device, start, start + ns(e["dur"]), is_comm(e["name"])))
    comm = overlapped = 0
    for device, begin, end, c in spans:
        if not c:
            continue
        comm += end - begin
        cuts = sorted((max(b, begin), min(e, end)) for d, b, e, cc in spans
                      if not cc and d == device and b < end and e > begin)
        covered, cursor = 0, begin
        for b, e in cuts:
            b = max(b, cursor)
            if e > b:
                covered += e - b
                cursor = e
        overlapped += covered
    return {"kernel_time_ns": total, "comm_ns": comm, "overlapped_ns": overlapped}


def check_group(kernlens, files, straggler):
    out = subprocess.run([kernlens, "analyze", *files, "--format", "json"], capture_output=True, text=True)
    if out.returncode != 0:
        return [f"kernlens exited {out.returncode}: {out.stderr.strip()}"]
    doc = json.loads(out.stdout)
    if "ranks" not in doc:
        return ["no \"ranks\" in kernlens's JSON"]
    got = {r["rank"]: r for r in doc["ranks"]["ranks"]}
    errors = []
    for position, path in enumerate(files):
        trace = load(path)
        rank = trace.get("distributedInfo", {}).get("rank", position)
        want = rank_figures(trace)
        if rank not in got:
            errors.append(f"rank {rank} ({path}) missing")
            continue
        r = got[rank]
        have = {"kernel_time_ns": r["kernel_time_ns"], "comm_ns": r["communication"]["comm_ns"],
                "overlapped_ns": r["communication"]["overlapped_ns"]}
        for key, value in want.items():
            if abs(Decimal(repr(have[key])) - value) >= Decimal("0.5"):
                errors.append(f"rank {rank} {key}: kernlens {have[key]} != {value}")
        exposed = r["communication"]["exposed_ns"]
        if abs(Decimal(repr(exposed)) - (want["comm_ns"] - want["overlapped_ns"])) >= Decimal("0.5"):
            errors.append(f"rank {rank} exposed_ns: kernlens {exposed} != comm - overlapped")
    if straggler is not None:
        named = [r["rank"] for r in doc["ranks"]["ranks"] if r["role"] == "straggler"]
        if named != [straggler]:
            errors.append(f"straggler: kernlens names {named}, expected [{straggler}]")
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernlens", required=True)
    parser.add_argument("--straggler", action="append", default=[], help="GROUP_INDEX=RANK")
    parser.add_argument("groups", nargs="+", help="comma-separated trace files of one job")
    args = parser.parse_args()
    stragglers = dict((int(k), int(v)) for k, v in (s.split("=") for s in args.straggler))
    failed = False
    for i, group in enumerate(args.groups):
        files = group.split(",")
        errors = check_group(args.kernlens, files, stragglers.get(i))
        print(("FAIL " if errors else "ok   ") + group)
        for e in errors:
            print("     " + e)
        failed = failed or bool(errors)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
