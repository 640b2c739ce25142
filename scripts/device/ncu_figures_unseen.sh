#!/usr/bin/env bash
# The ncu raw-page analysis on model families no test, fixture or example uses: a StableLM model
# (partial rotary embeddings, LayerNorm) and a StarCoder2 model (GQA, sliding window, GELU MLP),
# or (FAMILIES) a BLOOM model (ALiBi, fused QKV) and a GPTBigCode model (multi-query attention),
# built from transformers configs with random weights and run by examples/workloads/llm_stages.py
# (no warm-up; a prefill and a few decode steps in NVTX ranges) under ncu with the roofline
# tier's sections (--clock-control none, the first KERNELS kernels of the ranges), exported as a
# raw page (base units, as `kernlens profile` exports it). For each page:
#   - tests/independent/check_ncu_totals.py: kernel time, launches and per-kernel totals;
#   - tests/independent/check_ncu_figures.py: each kernel's time-weighted figures and DRAM bytes;
#   - the JSON analysis on 1, 2 and 16 threads and on the portable scanner path with one md5,
#     the same as build/devrun/kernlens_base's where that is there (an older build).
# Uses build/devrun (scripts/device/make_devrun.sh). About a minute a family on an H100.
#   scripts/device/ncu_figures_unseen.sh OUT
# Env: FAMILIES (default "stablelm starcoder2"; also bloom, gptbigcode), KERNELS (default 120).
set -uo pipefail
out=${1:?usage: ncu_figures_unseen.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:/opt/nvidia/nsight-compute/2025.3.1:$PATH
mkdir -p "$out"
runner=$out/run_family.py
cat > "$runner" <<'PY'
import sys
sys.path.insert(0, sys.argv.pop(1))
import transformers
import llm_stages
llm_stages.CONFIGS["stablelm"] = lambda: transformers.StableLmConfig(
    hidden_size=1152, intermediate_size=3072, num_hidden_layers=4, num_attention_heads=18,
    num_key_value_heads=18, partial_rotary_factor=0.25, vocab_size=50304, max_position_embeddings=2048)
llm_stages.CONFIGS["starcoder2"] = lambda: transformers.Starcoder2Config(
    hidden_size=960, intermediate_size=3840, num_hidden_layers=4, num_attention_heads=15,
    num_key_value_heads=5, sliding_window=512, vocab_size=49152, max_position_embeddings=2048)
llm_stages.CONFIGS["bloom"] = lambda: transformers.BloomConfig(
    hidden_size=1024, n_layer=4, n_head=16, vocab_size=50304)
llm_stages.CONFIGS["gptbigcode"] = lambda: transformers.GPTBigCodeConfig(
    n_embd=1024, n_inner=4096, n_layer=4, n_head=16, multi_query=True, vocab_size=49152, n_positions=2048)
sys.argv = ["llm_stages.py"] + sys.argv[1:]
llm_stages.main()
PY
status=0
for family in ${FAMILIES:-stablelm starcoder2}; do
  rep=$out/$family
  page=$out/${family}_raw.csv
  ncu --clock-control none --target-processes all --nvtx --nvtx-include "prefill/" --nvtx-include "decode/" \
    -c "${KERNELS:-120}" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section WarpStateStats --section SpeedOfLight_RooflineChart \
    --section SpeedOfLight_HierarchicalTensorRooflineChart -f -o "$rep" \
    python3 "$runner" "$root/examples/workloads" --model "$family" --batch 2 --prompt 256 --decode-steps 4 --warmup 0 \
    > "$out/${family}_ncu.log" 2>&1
  grep -q "No kernels were profiled" "$out/${family}_ncu.log" && { echo "$family: ncu profiled no kernel"; status=1; continue; }
  ncu --import "$rep.ncu-rep" --page raw --csv --print-units base > "$page" 2> "$out/${family}_export.log"
  rows=$(($(wc -l < "$page") - 2))
  echo "== $family: $rows launches, $(du -h "$page" | cut -f1)"
  python3 tests/independent/check_ncu_totals.py --kernlens "$devrun/kernlens" "$page" || status=1
  python3 tests/independent/check_ncu_figures.py --kernlens "$devrun/kernlens" "$page" || status=1
  sums=()
  for threads in 1 2 16; do
    sums+=("$("$devrun/kernlens" analyze "$page" --format json --threads "$threads" | md5sum | cut -d' ' -f1)")
  done
  sums+=("$(KERNLENS_SIMD=portable "$devrun/kernlens" analyze "$page" --format json | md5sum | cut -d' ' -f1)")
  [[ -x $devrun/kernlens_base ]] && sums+=("$("$devrun/kernlens_base" analyze "$page" --format json | md5sum | cut -d' ' -f1)")
  echo "md5 (1, 2, 16 threads, portable, base build): ${sums[*]}"
  [[ $(printf '%s\n' "${sums[@]}" | sort -u | wc -l) == 1 ]] || { echo "$family: the analyses differ"; status=1; }
  "$devrun/kernlens" analyze "$page" --format json > "$out/${family}_analysis.json"
  "$devrun/kernlens" analyze "$page" --top 8 > "$out/${family}_analysis.txt"
  rm -f "$rep.ncu-rep"
done
exit $status
