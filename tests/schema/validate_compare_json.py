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


def validator_for(root, name):
    schema = json.loads((root / "docs/schema" / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def check_outputs(kernlens, validator, cases):
    """Runs each (label, compare arguments, exit code: None for 0 or 1) and validates its JSON: (failures, last
    document)."""
    failures, doc = 0, None
    for label, args, expected_rc in cases:
        proc = subprocess.run([kernlens, "compare", *map(str, args), "--format", "json"], capture_output=True, text=True)
        if expected_rc is not None and proc.returncode != expected_rc or proc.returncode not in (0, 1):
            print(f"FAIL {label}: exit {proc.returncode}, expected {expected_rc}: {proc.stderr}")
            failures += 1
            continue
        doc = json.loads(proc.stdout)
        for e in list(validator.iter_errors(doc))[:10]:
            print(f"FAIL {label}: {list(e.absolute_path)}: {e.message[:300]}")
            failures += 1
        print(f"ok   {label}: {doc['verdict']}, {len(doc['kernels'])} kernels")
    return failures, doc


def check_rejects(validator, doc, breakages):
    """The schema must reject `doc` with each (path, value) put in: a schema that accepts anything fails."""
    failures = 0
    for path, value in breakages:
        broken = copy.deepcopy(doc)
        target = broken
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        if validator.is_valid(broken):
            print(f"FAIL the schema accepts {path} = {value!r}")
            failures += 1
    return failures


def main():
    kernlens, root = sys.argv[1], pathlib.Path(sys.argv[2])
    runs, groups = root / "examples/data/runs", root / "tests/fixtures/compare_groups"
    pairs = validator_for(root, "kernlens.compare-1.schema.json")
    failures, doc = check_outputs(kernlens, pairs, [
        (f"{b} -> {c}", [runs / b, runs / c], rc)
        for b, c, rc in (("llama_prefill", "qwen_prefill", 0), ("qwen_prefill", "llama_prefill", 1),
                         ("llama_prefill", "llama_prefill", 0))])
    if doc is None:
        return 1
    failures += check_rejects(pairs, doc, ((("kernels", 0, "match"), "fuzzy"), (("verdict",), "fine"),
                                           (("operations", 0, "base_kernels"), -1), (("total", "base_ns"), -1),
                                           (("schema",), "kernlens.compare/2")))
    # Multi-rank runs (each its ranks' inputs joined by ','): the per-rank part, and its note
    # when one side has one rank.
    multirank = root / "tests/fixtures/multirank"
    hta = f"{multirank}/hta_sendrecv_rank-0.json.gz,{multirank}/hta_sendrecv_rank-1.json.gz"
    gloo = f"{multirank}/tp_gloo_rank-0.json.gz,{multirank}/tp_gloo_rank-1.json.gz"
    gloo_tracer = f"{multirank}/tp_gloo-487.kltrace,{multirank}/tp_gloo-488.kltrace"
    rank_failures, _ = check_outputs(kernlens, pairs, [
        ("ranks hta -> hta", [hta, hta], 0),
        ("ranks hta -> one rank", [hta, multirank / "hta_nccl_allreduce_rank-0.json.gz"], None)])
    rank_failures_2, doc = check_outputs(kernlens, pairs, [("ranks gloo torch -> tracer", [gloo, gloo_tracer], None)])
    if doc is None or "ranks" not in doc:
        print("FAIL the multi-rank compare has no ranks part")
        return 1
    failures += rank_failures + rank_failures_2 + check_rejects(
        pairs, doc, ((("ranks", "ranks", 0, "base_role"), "slow"), (("ranks", "straggler", "base"), "one"),
                     (("ranks", "ranks", 0, "kernel_time", "delta_ns"), None)))
    # Groups: several runs or repetitions per side, kernlens.compare-groups/1.
    group = validator_for(root, "kernlens.compare-groups-1.schema.json")
    group_failures, doc = check_outputs(kernlens, group, [
        ("groups saxpy_r5 -> saxpy_r5_slow10", [groups / "saxpy_r5", "--vs", groups / "saxpy_r5_slow10"], 1),
        ("groups llama_prefill llama_prefill_b4 -> llama_prefill_b8",
         [runs / "llama_prefill", runs / "llama_prefill_b4", "--vs", runs / "llama_prefill_b8"], 0)])
    if doc is None:
        return 1
    failures += group_failures + check_rejects(group, doc, ((("total", "interval"), [1.0]), (("samples_are",), "maybe"),
                                                            (("base", "samples"), 0)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
