#!/usr/bin/env python3
"""Validates `kernlens compare --format json` against docs/schema/kernlens.compare-1.schema.json,
and group compares (several runs or repetitions per side) against kernlens.compare-groups-1.

Compares the example H100 runs both ways and with themselves, checks each document against
the schema, and checks that the schema rejects documents that break it (so that a schema
which accepts anything cannot pass).

Usage: validate_compare_json.py KERNLENS REPO_ROOT
"""
import copy
import json
import pathlib
import subprocess
import sys

import jsonschema  # Debian: python3-jsonschema


def main():
    kernlens, root = sys.argv[1], pathlib.Path(sys.argv[2])
    schema = json.loads((root / "docs/schema/kernlens.compare-1.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    runs = root / "examples/data/runs"
    pairs = [("llama_prefill", "qwen_prefill", 0), ("qwen_prefill", "llama_prefill", 1),
             ("llama_prefill", "llama_prefill", 0)]
    failures = 0
    doc = None
    for base, candidate, expected_rc in pairs:
        proc = subprocess.run([kernlens, "compare", str(runs / base), str(runs / candidate), "--format", "json"],
                              capture_output=True, text=True)
        if proc.returncode != expected_rc:
            print(f"FAIL {base} {candidate}: exit {proc.returncode}, expected {expected_rc}: {proc.stderr}")
            failures += 1
            continue
        doc = json.loads(proc.stdout)
        for e in list(validator.iter_errors(doc))[:10]:
            print(f"FAIL {base} {candidate}: {list(e.absolute_path)}: {e.message[:300]}")
            failures += 1
        print(f"ok   {base} -> {candidate}: {doc['verdict']}, {len(doc['kernels'])} kernels")
    if doc is None:
        return 1
    for path, value in ((("kernels", 0, "match"), "fuzzy"), (("verdict",), "fine"), (("operations", 0, "base_kernels"), -1),
                        (("total", "base_ns"), -1), (("schema",), "kernlens.compare/2")):
        broken = copy.deepcopy(doc)
        target = broken
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        if validator.is_valid(broken):
            print(f"FAIL the schema accepts {path} = {value!r}")
            failures += 1
    return 1 if failures or validate_groups(kernlens, root) else 0


def validate_groups(kernlens, root):
    """The group schema on the repetition fixtures and on whole runs; and that it rejects breakage."""
    schema = json.loads((root / "docs/schema/kernlens.compare-groups-1.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    groups, runs = root / "tests/fixtures/compare_groups", root / "examples/data/runs"
    cases = [([groups / "saxpy_r5"], [groups / "saxpy_r5_slow10"], 1),
             ([runs / "llama_prefill", runs / "llama_prefill_b4"], [runs / "llama_prefill_b8"], 0)]
    failures, doc = 0, None
    for base, candidate, expected_rc in cases:
        proc = subprocess.run([kernlens, "compare", *map(str, base), "--vs", *map(str, candidate), "--format", "json"],
                              capture_output=True, text=True)
        if proc.returncode != expected_rc:
            print(f"FAIL groups {base}: exit {proc.returncode}, expected {expected_rc}: {proc.stderr}")
            failures += 1
            continue
        doc = json.loads(proc.stdout)
        for e in list(validator.iter_errors(doc))[:10]:
            print(f"FAIL groups {base}: {list(e.absolute_path)}: {e.message[:300]}")
            failures += 1
        print(f"ok   groups {[b.name for b in base]} -> {[c.name for c in candidate]}: {doc['verdict']}")
    for path, value in ((("total", "interval"), [1.0]), (("samples_are",), "maybe"), (("base", "samples"), 0)):
        broken = copy.deepcopy(doc)
        target = broken
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        if validator.is_valid(broken):
            print(f"FAIL the group schema accepts {path} = {value!r}")
            failures += 1
    return failures


if __name__ == "__main__":
    sys.exit(main())
