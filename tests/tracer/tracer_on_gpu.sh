#!/usr/bin/env bash
# CTest `tracer_on_gpu`: the CUPTI tracer itself needs a GPU. Without one (CI) it says so and
# returns CTest's skip code (77). With one, a tiny PyTorch program with an NVTX range runs
# under the tracer and its .kltrace must hold kernels inside that range.
#   tests/tracer/tracer_on_gpu.sh KERNLENS TRACER_SO
set -euo pipefail
kernlens=$1 tracer=$2
if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L > /dev/null 2>&1; then
  echo "SKIPPED: the tracer needs a GPU; CI has none"
  exit 77
fi
if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2> /dev/null; then
  echo "SKIPPED: no python3 with CUDA-enabled torch to drive the tracer"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
CUDA_INJECTION64_PATH=$tracer KERNLENS_TRACE_DIR=$out python3 - <<'PY'
import torch
x = torch.ones(1024, 1024, device="cuda")
with torch.cuda.nvtx.range("work"):
    for _ in range(10):
        x = x * 1.0001 + 1
torch.cuda.synchronize()
PY
files=("$out"/kernlens-*.kltrace)
[[ -f ${files[0]} ]] || { echo "FAILED: no kernlens-*.kltrace written"; exit 1; }
"$kernlens" analyze "${files[@]}" --format json > "$out/a.json"
python3 - "$out/a.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
work = [s for s in doc["stages"] if s["name"] == "work"]
assert doc["totals"]["launches"] >= 20, doc["totals"]
assert work and work[0]["launches"] >= 20, doc["stages"]
print("tracer ok:", doc["totals"]["launches"], "launches,", work[0]["launches"], "in stage 'work'")
PY
