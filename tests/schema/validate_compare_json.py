#!/usr/bin/env python3
"""Validates `kernlens compare --format json` against docs/schema/kernlens.compare-1.schema.json.

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
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
