#!/usr/bin/env python3
"""A bounded mutation campaign over the fixture formats: kernlens must survive damaged input.

Each case takes one small real export (every format kernlens reads), damages it the way files
get damaged (cut short, a byte flipped, a line deleted or repeated; gzip files both in their
compressed bytes and in the text they hold), and runs `kernlens analyze CASE --format json -o
OUT` under a memory limit (ulimit -v) and a time limit. A few hostile inputs come first (links
to /dev/zero and /dev/urandom, gzip files that inflate to 1.5 GiB): they must be refused.
Every case must:
  - exit 0 or 2 (no crash: no signal, no other code; no hang past the time limit);
  - never print "internal error" (an exception that reached main);
  - on exit 2: name the damaged file in its first "kernlens: error:" line, and leave no output;
  - on exit 0: leave an output that is whole JSON.
The cases are drawn from a seeded generator, so a failure is reproduced with the same --seed
and --cases; --keep DIR keeps the failing inputs. Exit status: 0 when every case passed.

  tests/robustness/mutation_campaign.py --kernlens build/kernlens --cases 2000 --jobs 2
"""
import argparse
import collections
import concurrent.futures
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zlib
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")

# One or two small real exports of every format kernlens reads.
SEEDS = [
    "ncu/demo_raw_base.csv",                        # ncu --page raw --csv
    "ncu/demo_raw_nvtx_rename.csv",                 # ... with NVTX columns
    "ncu/qwen_decode_details_first3.csv",           # ncu --page details --csv
    "ncu/llama_prefill_details.csv.gz",             # ... gzipped
    "ncu/demo_summary.csv",                         # ncu --print-summary per-kernel --csv
    "nsys/llama_stages.sqlite",                     # nsys export --type sqlite
    "nsys/saxpy_stats_cuda_gpu_kern_sum.csv",       # nsys stats cuda_gpu_kern_sum
    "nsys/llama_stages_stats_cuda_gpu_kern_sum_nvtx-name.csv",
    "pytorch/nested_stages_trace.json.gz",          # torch.profiler chrome trace, gzipped
    "pytorch/gemm_zoo_trace.json.gz",
    "kltrace/decode_small.kltrace",                 # the kernlens tracer's own format
]


def truncate(data, rng):
    return data[: rng.randrange(len(data))]


def flip_bytes(data, rng):
    out = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 8))):
        at = rng.randrange(len(out))
        out[at] = rng.choice((out[at] ^ (1 << rng.randrange(8)), rng.randrange(256),
                              ord('"'), ord(","), ord("\n"), 0))
    return bytes(out)


def split_lines(data):
    lines = data.split(b"\n")
    return lines if len(lines) > 1 else None


def delete_line(data, rng):
    lines = split_lines(data)
    if not lines:
        return truncate(data, rng)
    del lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


def duplicate_line(data, rng):
    lines = split_lines(data)
    if not lines:
        return flip_bytes(data, rng)
    at = rng.randrange(len(lines))
    lines.insert(at, lines[at])
    return b"\n".join(lines)


MUTATIONS = [truncate, flip_bytes, delete_line, duplicate_line]


def gzip_of(head, filler, size):
    """A gzip file of `head` followed by `size` bytes of `filler`, made without holding them."""
    z = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [z.compress(head)]
    chunk = filler * (16 << 20)
    for _ in range(size // len(chunk)):
        parts.append(z.compress(chunk))
    parts.append(z.flush())
    return b"".join(parts)


def hostile_cases(work):
    """Inputs that never end or inflate past any memory limit: each must be refused (exit 2)
    quickly, naming the file, not grow until memory runs out."""
    cases = []
    for device in ("/dev/zero", "/dev/urandom"):
        path = os.path.join(work, "hostile_" + os.path.basename(device) + ".json")
        os.symlink(device, path)
        cases.append((path, f"a link to {device}"))
    big = 3 << 29  # 1.5 GiB inflated, past the campaign's memory limit
    for name, data, how in (
            ("hostile_zeros.json.gz", gzip_of(b"", b"\0", big), "1.5 GiB of zeros, gzipped"),
            ("hostile_long_line.csv.gz", gzip_of(b"Time (%),Total Time (ns),Instances,Name\n", b"A", big),
             "a CSV with a 1.5 GiB line, gzipped")):
        path = os.path.join(work, name)
        with open(path, "wb") as f:
            f.write(data)
        cases.append((path, how))
    return cases


def make_case(seed_bytes, is_gzip, rng):
    """The damaged bytes and a description of the damage."""
    mutation = rng.choice(MUTATIONS)
    if is_gzip and rng.random() < 0.5:
        # Damage the text inside, then compress it again.
        return gzip.compress(mutation(gzip.decompress(seed_bytes), rng), 6), "inner " + mutation.__name__
    return mutation(seed_bytes, rng), mutation.__name__


def run_case(kernlens, path, out, memory_bytes, timeout_s):
    """(verdict, detail): verdict 'ok', 'exit2' or a failure name."""
    try:
        # The memory limit through the shell's ulimit (a preexec_fn is unsafe with threads).
        limit = f"ulimit -v {memory_bytes >> 10} && " if memory_bytes else ""
        proc = subprocess.run(["sh", "-c", limit + 'exec "$0" "$@"',
                               kernlens, "analyze", path, "--format", "json", "-o", out],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return "hang", f"no exit after {timeout_s} s"
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode < 0:
        return "crash", f"signal {-proc.returncode}: {err[-300:]}"
    if "internal error" in err:
        return "internal error", err.strip()[-300:]
    if proc.returncode == 2:
        first = next((l for l in err.splitlines() if l.startswith("kernlens: error:")), "")
        if not first.startswith(f"kernlens: error: {path}"):
            return "error without the file", err.strip()[-300:]
        if os.path.exists(out):
            return "output left after an error", first
        return "exit2", first
    if proc.returncode != 0:
        return f"exit {proc.returncode}", err.strip()[-300:]
    try:
        with open(out, "rb") as f:
            json.loads(f.read())
    except (OSError, ValueError) as e:
        return "bad output", str(e)
    return "ok", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernlens", required=True)
    ap.add_argument("--cases", type=int, default=2000, help="mutated inputs to run (default 2000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--memory-mib", type=int, default=1024,
                    help="ulimit -v for each run (default 1024; 0: none, as AddressSanitizer needs)")
    ap.add_argument("--timeout", type=float, default=30, help="seconds before a run counts as a hang")
    ap.add_argument("--keep", help="copy failing inputs into this directory")
    args = ap.parse_args()

    seeds = []
    for rel in SEEDS:
        with open(os.path.join(FIXTURES, rel), "rb") as f:
            data = f.read()
        seeds.append((rel, data, data[:2] == b"\x1f\x8b"))
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="kernlens-mutants-")
    cases = []
    for i in range(args.cases):
        rel, data, is_gzip = seeds[i % len(seeds)]
        mutated, how = make_case(data, is_gzip, rng)
        path = os.path.join(work, f"case{i:05d}_{os.path.basename(rel)}")
        with open(path, "wb") as f:
            f.write(mutated)
        cases.append((path, f"{rel}: {how}"))
    hostile = hostile_cases(work)

    start = time.monotonic()
    verdicts = collections.Counter()
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_case, args.kernlens, path, path + ".out.json",
                               args.memory_mib << 20, args.timeout): (path, how)
                   for path, how in hostile + cases}
        for future in concurrent.futures.as_completed(futures):
            path, how = futures[future]
            verdict, detail = future.result()
            if (path, how) in hostile and verdict == "ok":
                verdict, detail = "hostile input accepted", "expected exit 2"
            verdicts[verdict] += 1
            if verdict not in ("ok", "exit2"):
                failures.append((verdict, path, how, detail))
    elapsed = time.monotonic() - start

    print(f"{args.cases} mutated inputs from {len(SEEDS)} fixtures (seed {args.seed}) and {len(hostile)} hostile "
          f"ones (endless devices, gzip bombs), {elapsed:.1f} s, "
          + (f"ulimit -v {args.memory_mib} MiB" if args.memory_mib else "no memory limit")
          + f", {args.timeout:g} s each at most:")
    print(f"  exit 0: {verdicts['ok']}, exit 2 naming the file: {verdicts['exit2']}")
    failed = sum(n for v, n in verdicts.items() if v not in ("ok", "exit2"))
    print(f"  failures: {failed}" + "".join(f", {v}: {n}" for v, n in sorted(verdicts.items())
                                           if v not in ("ok", "exit2")))
    for verdict, path, how, detail in sorted(failures)[:20]:
        print(f"FAIL {verdict}: {os.path.basename(path)} ({how}): {detail}")
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            shutil.copy(path, args.keep)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
