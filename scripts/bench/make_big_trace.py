#!/usr/bin/env python3
"""Makes a big PyTorch profiler trace for benchmarks.

Repeats the events of a real trace (as written, byte for byte, but for a few numbers) until
the file reaches the target size, as if the profiled run had gone on: each copy's "ts" is
shifted past the end of the previous copy, and its ids ("correlation", flow "id",
"External id") are shifted past the previous copy's, so that launches stay distinct and
the CPU-to-GPU links stay right. The document's other members are written once. Only the
standard library is used.

Usage: scripts/bench/make_big_trace.py [-s MB] [-o OUT] [--fixture TRACE.json.gz]
"""

import argparse
import gzip
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_FIXTURE = os.path.join(ROOT, "tests", "fixtures", "pytorch", "llama_torch_trace.json.gz")
DEFAULT_OUTPUT = os.path.join(ROOT, "build", "bench", "big_trace.json")

# The numbers a copy shifts: times (microseconds with 3 decimals) and ids.
NUMBER = re.compile(rb'"(ts|correlation|id|External id)": (-?\d+(?:\.\d+)?)')


def ns(text):
    whole, _, frac = text.partition(b".")
    sign = -1 if whole.startswith(b"-") else 1
    return sign * (abs(int(whole)) * 1000 + int((frac + b"000")[:3]))


def us_text(value):
    sign = "-" if value < 0 else ""
    return f"{sign}{abs(value) // 1000}.{abs(value) % 1000:03d}".encode()


def split_events(doc):
    """The text before the first event, each event's text, and the text after the last."""
    start = doc.index(b"[", doc.index(b'"traceEvents"')) + 1
    events, depth, in_string, escaped, begin = [], 0, False, False, None
    for i in range(start, len(doc)):
        c = doc[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == 0x5C:  # backslash
                escaped = True
            elif c == 0x22:
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c == 0x7B:  # {
            if depth == 0:
                begin = i
            depth += 1
        elif c == 0x7D:
            depth -= 1
            if depth == 0:
                events.append(doc[begin:i + 1])
        elif c == 0x5D and depth == 0:  # the closing ] of traceEvents
            return doc[:start], events, doc[i:]
    sys.exit("the fixture's traceEvents array does not end")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-s", "--size-mb", type=float, default=500.0, help="target size in MB (10^6 bytes; default 500)")
    ap.add_argument("-o", "--output", default=DEFAULT_OUTPUT, help="output file (default build/bench/big_trace.json)")
    ap.add_argument("--fixture", default=DEFAULT_FIXTURE, help="trace whose events are repeated")
    args = ap.parse_args()

    raw = open(args.fixture, "rb").read()
    doc = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    head, events, tail = split_events(doc)
    # Each event as a template: literal pieces between the numbers a copy shifts.
    templates, ends, ids = [], [], [0]
    for e in events:
        pieces, numbers, at = [], [], 0
        for m in NUMBER.finditer(e):
            pieces.append(e[at:m.start(2)])
            is_time = m.group(1) == b"ts"
            numbers.append((is_time, ns(m.group(2)) if is_time else int(m.group(2))))
            if not is_time:
                ids.append(int(m.group(2)))
            at = m.end(2)
        pieces.append(e[at:])
        templates.append((pieces, numbers))
        ts = re.search(rb'"ts": (-?\d+(?:\.\d+)?)', e)
        dur = re.search(rb'"dur": (-?\d+(?:\.\d+)?)', e)
        if ts:
            ends.append(ns(ts.group(1)) + (ns(dur.group(1)) if dur else 0))
    starts = [n for _, nums in templates for t, n in nums if t]
    time_shift = max(ends) - min(starts) + 1_000_000  # copies 1 ms apart
    id_shift = max(ids) + 1

    target = int(args.size_mb * 1e6)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    tmp = args.output + ".tmp"
    written, copies = 0, 0
    with open(tmp, "wb") as out:
        out.write(head)
        written += len(head)
        while written < target or copies == 0:
            chunk = []
            for pieces, numbers in templates:
                parts = [pieces[0]]
                for (is_time, n), piece in zip(numbers, pieces[1:]):
                    parts.append(us_text(n + copies * time_shift) if is_time else str(n + copies * id_shift).encode())
                    parts.append(piece)
                chunk.append(b"".join(parts))
            text = (b",\n  " if copies else b"\n  ") + b",\n  ".join(chunk)
            out.write(text)
            written += len(text)
            copies += 1
        out.write(b"\n  " + tail)
    os.replace(tmp, args.output)  # never leave a half-written file under the final name
    print(f"{args.output}: {os.path.getsize(args.output) / 1e6:.1f} MB, {copies} copies of "
          f"{len(events)} events (from {os.path.basename(args.fixture)})")


if __name__ == "__main__":
    main()
