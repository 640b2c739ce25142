#!/usr/bin/env python3
"""Collects the distinct kernel names of profiler exports into one file, a name a line.

Usage: scripts/collect_kernel_names.py OUT.txt INPUT...

INPUT is an Nsight Compute CSV export (raw, details or summary page: the "Kernel Name"
column; console lines such as ==PROF== before the header are skipped) or a PyTorch profiler
chrome trace, .json or .json.gz (events with "cat": "kernel"). Names are written sorted by
their UTF-8 bytes, each once, so that the file is the same however often it is made.
"""
import csv
import gzip
import io
import json
import sys


def read_text(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data.decode("utf-8")


def ncu_names(text, path):
    lines = text.splitlines(keepends=True)
    start = next((i for i, l in enumerate(lines) if '"Kernel Name"' in l), None)
    if start is None:
        sys.exit(f"{path}: no CSV header with a 'Kernel Name' column")
    rows = csv.reader(io.StringIO("".join(lines[start:])))
    column = next(rows).index("Kernel Name")
    # The raw page's second row holds units: its "Kernel Name" cell is empty.
    return {row[column] for row in rows if len(row) > column and row[column]}


def trace_names(text):
    doc = json.loads(text)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return {e["name"] for e in events if e.get("cat") == "kernel"}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, inputs = sys.argv[1], sys.argv[2:]
    names = set()
    for path in inputs:
        text = read_text(path)
        is_json = text.lstrip()[:1] in ("{", "[")
        names |= trace_names(text) if is_json else ncu_names(text, path)
    for name in names:
        if "\n" in name or "\r" in name:
            sys.exit(f"a kernel name with a line break cannot be written a name a line: {name!r}")
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for name in sorted(names, key=lambda n: n.encode("utf-8")):
            f.write(name + "\n")
    print(f"{out}: {len(names)} distinct kernel names from {len(inputs)} file(s)")


if __name__ == "__main__":
    main()
