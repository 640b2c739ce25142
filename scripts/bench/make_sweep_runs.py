#!/usr/bin/env python3
"""Writes a sweep of N complete points for the `sweep ingest` benchmark (bench/sweep_ingest.sh):
OUT/sweep.toml (10 models x 10 batch sizes x 10 token counts = 1,000 points by default) and,
for every point, what `kernlens sweep submit` and `kernlens profile` would have left:
OUT/runs/POINT/point.json and OUT/runs/POINT/run/ (manifest.json, discovery/, deep/).

Each run is one of the four real H100 prefill run directories in examples/data/runs (llama at
batch 1, 4 and 8, qwen), chosen by model, with its kernel durations (ncu's
gpu__time_duration.sum in the discovery export) scaled by the point's batch and tokens, so
that every run has its own bytes, run key and figures. Nothing else is changed: the deep
pass's metrics are the real ones.

  scripts/bench/make_sweep_runs.py OUT [--models 10 --batches 10 --tokens 10]
"""
import argparse, csv, gzip, io, json, os, shutil, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TEMPLATES = ["llama_prefill", "llama_prefill_b4", "llama_prefill_b8", "qwen_prefill"]
DURATION = "gpu__time_duration.sum"


def scaled_timing(path, factor):
    """The discovery export with every launch's duration times `factor` (ncu's "1,234" form kept)."""
    rows = list(csv.reader(io.StringIO(gzip.open(path, "rt", newline="").read())))
    col = rows[0].index(DURATION)
    for row in rows[2:]:  # after the header and the units row
        if row[col]:
            row[col] = f"{round(float(row[col].replace(',', '')) * factor):,}"
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return gzip.compress(out.getvalue().encode(), mtime=0)


def write_point(runs, pid, template, model, batch, tokens, timing):
    src = os.path.join(ROOT, "examples", "data", "runs", template)
    point = os.path.join(runs, pid)
    run = os.path.join(point, "run")
    shutil.copytree(src, run, ignore=shutil.ignore_patterns("analysis.json"))
    with open(os.path.join(run, "discovery", "timing_raw.csv.gz"), "wb") as f:
        f.write(timing)
    manifest = json.load(open(os.path.join(src, "manifest.json")))
    manifest["run_id"] = "run"
    manifest["command"] = ["python3", "llm_stages.py", "--model", model, "--batch", str(batch), "--prompt", str(tokens)]
    json.dump(manifest, open(os.path.join(run, "manifest.json"), "w"), indent=2)
    tags = {"model": model, "batch": str(batch), "tokens": str(tokens), "sweep": "bench", "sweep_point": pid}
    json.dump({"schema": "kernlens.sweep-point/1", "sweep": "bench", "id": pid, "tags": tags},
              open(os.path.join(point, "point.json"), "w"), indent=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--tokens", type=int, default=10)
    a = ap.parse_args()
    models = [f"model{m}" for m in range(a.models)]
    batches = [1 << b for b in range(a.batches)]
    tokens = [128 * (t + 1) for t in range(a.tokens)]
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    runs = os.path.join(a.out, "runs")
    os.makedirs(runs)
    with open(os.path.join(a.out, "sweep.toml"), "w") as f:
        f.write(f'''# {len(models) * len(batches) * len(tokens)} points written by scripts/bench/make_sweep_runs.py
name = "bench"
run_root = "runs"
command = ["python3", "llm_stages.py", "--model", "{{model}}", "--batch", "{{batch}}", "--prompt", "{{tokens}}"]
point_name = "{{model}}-b{{batch}}-t{{tokens}}"

[matrix]
model = {json.dumps(models)}
batch = {json.dumps(batches)}
tokens = {json.dumps(tokens)}
''')
    for mi, model in enumerate(models):
        template = TEMPLATES[mi % len(TEMPLATES)]
        timing = os.path.join(ROOT, "examples", "data", "runs", template, "discovery", "timing_raw.csv.gz")
        for b in batches:
            for t in tokens:
                factor = (1 + mi / 10) * (b ** 0.5) * (t / 128) ** 0.7
                write_point(runs, f"{model}-b{b}-t{t}", template, model, b, t, scaled_timing(timing, factor))
        print(f"{model}: {len(batches) * len(tokens)} points from {template}", file=sys.stderr)


if __name__ == "__main__":
    main()
