#!/usr/bin/env python3
"""Makes a big Nsight Compute raw-page CSV for benchmarks.

Repeats the data rows of a real export (header row, units row, then launches) until the
file reaches the target size, renumbering the "ID" column so every launch stays distinct,
as in one long ncu report. Only the standard library is used.

Usage: scripts/bench/make_big_raw.py [-s MB] [-o OUT] [--fixture CSV]
"""

import argparse
import csv
import io
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_FIXTURE = os.path.join(ROOT, "tests", "fixtures", "ncu", "qwen_decode_raw.csv")
DEFAULT_OUTPUT = os.path.join(ROOT, "build", "bench", "big_raw.csv")


def quote_all(fields):
    """One CSV line quoted as ncu writes it: every field in quotes, CRLF-free."""
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(fields)
    return buf.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-s", "--size-mb", type=float, default=200.0,
                    help="target size in MB (10^6 bytes; default 200)")
    ap.add_argument("-o", "--output", default=DEFAULT_OUTPUT,
                    help="output file (default build/bench/big_raw.csv)")
    ap.add_argument("--fixture", default=DEFAULT_FIXTURE,
                    help="raw-page CSV whose rows are repeated (default qwen_decode_raw.csv)")
    args = ap.parse_args()

    with open(args.fixture, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if len(rows) < 3 or "ID" not in rows[0]:
        sys.exit(f"{args.fixture}: expected a header with an 'ID' column, a units row and data")
    header, units, data = rows[0], rows[1], rows[2:]
    id_col = header.index("ID")
    if any(len(r) != len(header) for r in data):
        sys.exit(f"{args.fixture}: data rows are not all as wide as the header")

    # Each template row is pre-serialised around its ID cell, so writing is a string join.
    templates = []
    for r in data:
        prefix = quote_all(r[:id_col])[:-1] + "," if id_col > 0 else ""
        suffix = "," + quote_all(r[id_col + 1:]) if id_col + 1 < len(r) else "\n"
        templates.append((prefix, suffix))
    head = quote_all(header) + quote_all(units)

    target = int(args.size_mb * 1e6)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    tmp = args.output + ".tmp"
    written, launches = 0, 0
    with open(tmp, "w", newline="", encoding="utf-8") as out:
        out.write(head)
        written += len(head.encode())
        chunk = []
        while written < target:
            prefix, suffix = templates[launches % len(templates)]
            line = f'{prefix}"{launches}"{suffix}'
            chunk.append(line)
            written += len(line.encode())
            launches += 1
            if len(chunk) == 1024:
                out.write("".join(chunk))
                chunk.clear()
        out.write("".join(chunk))
    os.replace(tmp, args.output)  # never leave a half-written file under the final name
    print(f"{args.output}: {written / 1e6:.1f} MB, {launches} launches "
          f"({len(header)} columns, from {os.path.basename(args.fixture)})")


if __name__ == "__main__":
    main()
