#!/usr/bin/env python3
"""Checks `kernlens analyze --format csv` against `--format json`, read with Python's csv module.

For every committed run and a few fixtures: each table alone (--table kernels|families|stages)
is one header and one row per JSON row, with the same names, counts and numbers; all three
together are the same tables as "# NAME" sections separated by blank lines; fields with commas
and quotes (kernel names) survive; a value JSON leaves out is an empty field.

Usage: validate_csv_output.py KERNLENS REPO_ROOT
"""
import csv
import io
import json
import pathlib
import subprocess
import sys

# CSV column -> (JSON key path) compared for every row.
KEYS = {
    "kernels": {"name": ("name",), "base_name": ("base_name",), "launches": ("launches",), "total_ns": ("total_ns",),
                "share": ("share",), "bottleneck": ("bottleneck",), "sm_pct": ("metrics", "sm_pct"),
                "flops": ("metrics", "flops")},
    "families": {"base_name": ("base_name",), "kernels": ("kernels",), "launches": ("launches",),
                 "total_ns": ("total_ns",), "dram_pct": ("metrics", "dram_pct")},
    "stages": {"name": ("name",), "launches": ("launches",), "kernel_time_ns": ("kernel_time_ns",),
               "wall_ns": ("wall_ns",), "busy_fraction": ("busy_fraction",), "flops": ("flops",), "mfu": ("mfu",)},
}


def run(*args):
    """stdout as written: no newline translation, so CRLF stays CRLF."""
    proc = subprocess.run(list(args), capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {proc.returncode}: {proc.stderr.decode()}")
    return proc.stdout.decode("utf-8")


def lookup(row, path):
    for key in path:
        if not isinstance(row, dict) or key not in row:
            return None
        row = row[key]
    return row


def same(csv_text, value):
    if value is None:
        return csv_text == ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return csv_text != "" and abs(float(csv_text) - value) <= 1e-12 * max(1.0, abs(value))
    return csv_text == str(value)


def compare(table, rows, expected, where):
    errors = []
    if len(rows) != len(expected):
        return [f"{where} {table}: {len(rows)} rows, json has {len(expected)}"]
    for i, (row, want) in enumerate(zip(rows, expected)):
        for column, path in KEYS[table].items():
            if not same(row[column], lookup(want, path)):
                errors.append(f"{where} {table} row {i + 1} {column}: csv {row[column]!r}, json {lookup(want, path)!r}")
    return errors


def sections(text):
    """'# NAME' sections of the all-tables output, each parsed as its own CSV."""
    out, name, lines = {}, None, []
    for line in text.split("\r\n"):
        if line.startswith("# "):
            name, lines = line[2:], []
        elif line == "" and name:
            out[name] = list(csv.DictReader(io.StringIO("\r\n".join(lines), newline="")))
            name = None
        elif name:
            lines.append(line)
    return out


def main():
    kernlens, root = sys.argv[1], pathlib.Path(sys.argv[2])
    inputs = sorted(str(p) for p in (root / "examples/data/runs").iterdir() if (p / "manifest.json").exists())
    inputs += [str(root / "tests/fixtures/nsys/llama_stages.sqlite"), str(root / "tests/fixtures/ncu/qwen_decode_raw.csv")]
    errors = []
    for source in inputs:
        doc = json.loads(run(kernlens, "analyze", source, "--format", "json"))
        where = pathlib.Path(source).name
        for table in KEYS:
            text = run(kernlens, "analyze", source, "--format", "csv", "--table", table)
            if "\n" in text.replace("\r\n", "") or not text.endswith("\r\n"):
                errors.append(f"{where} {table}: lines do not all end in CRLF")
            errors += compare(table, list(csv.DictReader(io.StringIO(text, newline=""))), doc[table], where)
        every = sections(run(kernlens, "analyze", source, "--format", "csv"))
        if sorted(every) != sorted(KEYS):
            errors.append(f"{where}: sections {sorted(every)}")
        for table, rows in every.items():
            errors += compare(table, rows, doc[table], where + " (sections)")
        print(f"{where}: {len(doc['kernels'])} kernels, {len(doc['families'])} families, {len(doc['stages'])} stages")
    for e in errors[:40]:
        print("FAIL", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
