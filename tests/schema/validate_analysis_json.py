#!/usr/bin/env python3
"""Validates `kernlens analyze --format json` against docs/schema/kernlens.analysis-1.schema.json.

Runs kernlens on every export under tests/fixtures (each alone, and the pages of one report
together, with and without user work options) and checks each document against the schema.
Also checks that the schema itself is valid and that it rejects a document that breaks it,
so that a schema which accepts anything cannot pass.

Usage: validate_analysis_json.py KERNLENS REPO_ROOT
"""
import copy
import json
import pathlib
import subprocess
import sys

import jsonschema  # Debian: python3-jsonschema


def main():
    kernlens, root = sys.argv[1], pathlib.Path(sys.argv[2])
    schema = json.loads((root / "docs/schema/kernlens.analysis-1.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)

    fixtures = root / "tests/fixtures"
    runs = [[str(p)] for p in sorted(fixtures.glob("ncu/*.csv*")) if "stdout" not in p.name]
    runs += [
        [str(fixtures / "ncu/roofline_checks_raw.csv"), str(fixtures / "ncu/roofline_checks_details.csv")],
        [str(fixtures / "ncu/gpt2_prefill_raw.csv"), "--params", "1.2e8", "--tokens", "prefill=1024"],
        [str(fixtures / "ncu/qwen_decode_raw.csv"), "--model-flops", "3e9", "--precision", "fp8"],
    ]
    # Run directories: intervals from kernels never measured, analytic FLOPs beside them.
    runs_dir = root / "examples/data/runs"
    llama = str(root / "examples/workloads/configs/llm_stages_llama.json")
    runs += [
        [str(runs_dir / "llama_prefill"), "--model-config", llama, "--batch", "4", "--prompt-tokens", "256",
         "--runs", "2"],
        [str(runs_dir / "llama_decode_tracer"), "--model-config", llama, "--batch", "1", "--prompt-tokens", "128",
         "--decode-steps", "8"],
    ]
    # Several ranks (issue 17): the "ranks" section.
    multirank = fixtures / "multirank"
    runs += [
        [str(multirank / "hta_sendrecv_rank-0.json.gz"), str(multirank / "hta_sendrecv_rank-1.json.gz")],
        [str(multirank / "tp_gloo-487.kltrace"), str(multirank / "tp_gloo-488.kltrace")],
    ]
    failures = 0
    last_doc = None
    for args in runs:
        proc = subprocess.run([kernlens, "analyze", "--format", "json", *args], capture_output=True, text=True)
        if proc.returncode != 0:
            # Not every fixture is an input (logs, version notes); those must fail cleanly.
            if proc.returncode != 2 or not proc.stderr.startswith("kernlens: error: "):
                print(f"FAIL {args}: exit {proc.returncode}: {proc.stderr}")
                failures += 1
            continue
        doc = json.loads(proc.stdout)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors[:10]:
            print(f"FAIL {args}: {list(e.absolute_path)}: {e.message[:300]}")
        failures += bool(errors)
        last_doc = doc
        print(f"ok   {' '.join(pathlib.Path(a).name for a in args)}: {len(doc['kernels'])} kernels")

    # The schema must be able to fail: a verdict outside the list, a share above 1.
    if last_doc is None or not last_doc["kernels"]:
        print("FAIL no document with kernels to break")
        return 1
    for path, value in ((("kernels", 0, "bottleneck"), "slow"), (("kernels", 0, "share"), 1.5),
                        (("kernels", 0, "op_class"), "moe"), (("totals", "flops_low"), -1.0),
                        (("totals", "launches"), -1), (("schema",), "kernlens.analysis/2")):
        broken = copy.deepcopy(last_doc)
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
