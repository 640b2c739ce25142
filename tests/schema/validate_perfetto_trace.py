#!/usr/bin/env python3
"""Checks `kernlens export --format perfetto` against the Trace Event Format and reads it back.

For every committed run (examples/data/runs/*) and every timeline fixture (Nsight Systems,
PyTorch, kernlens tracer) and an Nsight Compute export:
  1. the trace is valid against docs/schema/chrome-trace-event.schema.json (python3-jsonschema),
     starts with "traceEvents" (Perfetto's tokenizer stops at the first key it does not know),
     names every process and thread it uses, nests the complete events of each track (Perfetto
     and the format allow no partial overlap on one thread), and closes every async slice;
  2. counted here, with Python's json and decimal (no code shared with kernlens), its kernel
     events are the launches and their durations the kernel time that `kernlens analyze` gives
     for the input;
  3. `kernlens analyze` reads it back as the same kernels (name, launches, time), the same
     totals and the same stages as the input.
Also checks that a trace which breaks the nesting or lacks a duration is rejected, so that a
checker which accepts anything cannot pass.

Usage: validate_perfetto_trace.py KERNLENS REPO_ROOT OUT_DIR
"""
import collections
import copy
import json
import pathlib
import subprocess
import sys
from decimal import Decimal

import jsonschema  # Debian: python3-jsonschema


def run(*args):
    proc = subprocess.run(list(args), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {proc.returncode}: {proc.stderr}")
    return proc.stdout


def analysis(kernlens, path):
    return json.loads(run(kernlens, "analyze", "--format", "json", str(path)))


def ns(us):
    """A time in microseconds as the nanoseconds a reader takes: rounded, as kernlens does."""
    return int((Decimal(us) * 1000).to_integral_value(rounding="ROUND_HALF_UP"))


def structure_errors(trace):
    """What the schema cannot say: names for every track, nesting per track, async pairs."""
    errors = []
    named_pids = {e["pid"] for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
    named_tracks = {(e["pid"], e["tid"]) for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    by_track = collections.defaultdict(list)
    for e in trace["traceEvents"]:
        if e["ph"] == "X":
            by_track[(e["pid"], e["tid"])].append(e)
    for track, events in by_track.items():
        if track[0] not in named_pids:
            errors.append(f"process {track[0]} has no process_name")
        if track not in named_tracks:
            errors.append(f"track {track} has no thread_name")
        # At the trace's resolution, the nanosecond: as kernlens and Perfetto read it.
        spans = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e) for e in events]
        spans.sort(key=lambda s: (s[0], -s[1]))
        open_ends = []
        for start, end, e in spans:
            while open_ends and open_ends[-1] <= start:
                open_ends.pop()
            if open_ends and end > open_ends[-1]:
                errors.append(f"track {track}: '{e['name']}' at {e['ts']} crosses the slice it starts in")
                break
            open_ends.append(end)
    begins = {}
    for e in trace["traceEvents"]:
        key = (e.get("cat"), e.get("id"), e["pid"])
        if e["ph"] == "b":
            begins[key] = e["ts"]
        elif e["ph"] == "e":
            if key not in begins or begins.pop(key) > e["ts"]:
                errors.append(f"async end without its begin: {key}")
    errors += [f"async begin never ended: {k}" for k in begins]
    return errors


def check_counts(trace, expected):
    """Kernel events and their time, counted here, against the input's analysis."""
    kernels = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] == "kernel"]
    total_ns = sum(ns(e["dur"]) for e in kernels)
    errors = []
    if len(kernels) != expected["totals"]["launches"]:
        errors.append(f"{len(kernels)} kernel events, analyze counts {expected['totals']['launches']} launches")
    if total_ns != round(Decimal(str(expected["totals"]["kernel_time_ns"]))):
        errors.append(f"kernel events sum to {total_ns} ns, analyze says {expected['totals']['kernel_time_ns']} ns")
    names = {e["args"]["full name"] for e in kernels}
    if len(names) != expected["totals"]["unique_kernels"]:
        errors.append(f"{len(names)} kernel names, analyze counts {expected['totals']['unique_kernels']}")
    return errors


def summary(doc, start_end):
    kernels = sorted((k["name"], k["launches"], k.get("total_ns")) for k in doc["kernels"])
    stages = sorted((s["name"], s["launches"], s.get("kernel_time_ns"), "wall_ns" in s) for s in doc["stages"]
                    if s["name"] not in start_end)
    ops = sorted((m["name"], m["count"], m.get("total_ns")) for m in doc.get("memory_ops", []))
    return doc["totals"]["kernel_time_ns"], doc["totals"]["launches"], doc["totals"]["unique_kernels"], kernels, stages, ops


def check_round_trip(kernlens, trace_path, trace, expected):
    """NVTX start/end ranges are async slices in the trace, which do not read back as stages."""
    start_end = {e["name"] for e in trace["traceEvents"] if e["ph"] == "b"}
    back = analysis(kernlens, trace_path)
    errors = []
    for what, a, b in zip(("kernel time", "launches", "kernels", "kernel rows", "stages", "memory ops"),
                          summary(expected, start_end), summary(back, start_end)):
        if a != b:
            errors.append(f"read back, {what} differ: {str(a)[:300]} vs {str(b)[:300]}")
    return errors


def inputs(root):
    runs = sorted(p for p in (root / "examples/data/runs").iterdir() if (p / "manifest.json").exists())
    fixtures = root / "tests/fixtures"
    return runs + [fixtures / "nsys/llama_stages.sqlite", fixtures / "kltrace/decode_small.kltrace",
                   fixtures / "ncu/qwen_decode_raw.csv"] + sorted(fixtures.glob("pytorch/*_trace.json.gz"))


def main():
    kernlens, root, out = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    schema = json.loads((root / "docs/schema/chrome-trace-event.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = 0
    good = None
    for source in inputs(root):
        trace_path = out / (source.name.split(".")[0] + ".trace.json")
        run(kernlens, "export", str(source), "--format", "perfetto", "-o", str(trace_path))
        text = trace_path.read_text()
        trace = json.loads(text, parse_float=Decimal)
        errors = [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(json.loads(text))][:10]
        if not text.startswith('{"traceEvents": ['):
            errors.append("the trace does not start with traceEvents")
        errors += structure_errors(trace)
        expected = analysis(kernlens, source)
        errors += check_counts(trace, expected)
        errors += check_round_trip(kernlens, trace_path, trace, expected)
        for e in errors:
            print(f"FAIL {source.name}: {e}")
        failures += bool(errors)
        events = sum(1 for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] == "kernel")
        print(f"{'ok  ' if not errors else 'FAIL'} {source.name}: {events} kernel events, "
              f"{expected['totals']['kernel_time_ns']} ns, {len(expected['stages'])} stages")
        if not errors and len(trace["traceEvents"]) > 10:
            good = trace

    # The checks can fail: a kernel moved to cross its neighbour, and a kernel without "dur".
    crossing = copy.deepcopy(good)
    xs = [e for e in crossing["traceEvents"] if e["ph"] == "X" and e["cat"] == "kernel"]
    xs[1].update(pid=xs[0]["pid"], tid=xs[0]["tid"], ts=xs[0]["ts"] + xs[0]["dur"] / 2, dur=xs[0]["dur"] * 10)
    if not structure_errors(crossing):
        print("FAIL: a trace with crossing events passed the nesting check")
        failures += 1
    no_dur = json.loads(json.dumps(good, default=float))
    next(e for e in no_dur["traceEvents"] if e["ph"] == "X").pop("dur")
    if validator.is_valid(no_dur):
        print("FAIL: a complete event without dur passed the schema")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
