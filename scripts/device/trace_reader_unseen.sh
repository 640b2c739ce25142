#!/usr/bin/env bash
# The PyTorch trace reader on traces of model families no test or fixture uses: a GPT-NeoX and a
# Phi-3 model built from transformers configs (random weights), each run by
# examples/workloads/llm_stages.py (prefill and 48 decode steps, record_function stages) under
# torch.profiler, the trace written as plain JSON. For each trace:
#   - tests/independent/check_pytorch_totals.py: kernel time, launches, per-kernel totals, memory
#     operations and every stage's launches recomputed with Python's json and decimal modules,
#     against `kernlens analyze --format json`, to the nanosecond;
#   - the JSON analysis on 1, 2 and 16 threads, on the portable scanner path
#     (KERNLENS_SIMD=portable) and of the gzipped trace (its "path" made the plain file's), with
#     the same md5 as on 1 thread; and
#     against build/devrun/kernlens_base where that is there (an older build; see below).
# Uses build/devrun (scripts/device/make_devrun.sh). About a minute on an H100.
#   scripts/device/trace_reader_unseen.sh OUT
# Env: FAMILIES (default "neox phi3"; also "falcon": Falcon with multi-query attention,
# "gemma": Gemma with 8 query / 2 KV heads of 128, "granite": IBM Granite with 16 query / 4 KV
# heads and its embedding, attention and residual multipliers, and "olmo2": OLMo 2 with its
# QK norms after the projections, "cohere": Cohere with its parallel attention and MLP block,
# layer norms without bias and logit scale, "qwen3": Qwen3 with 16 query / 8 KV heads of 64 and
# QK norms, "gptj": GPT-J with its parallel attention and MLP and rotary on 32 of 64 dims,
# "stablelm": StableLM 2 with 16 query / 4 KV heads and rotary on a quarter of each head,
# "mixtral": a Mixtral mixture of experts, 4 experts of which each token takes 2, and
# "starcoder2": StarCoder2 with 16 query / 4 KV heads, biases and a GELU MLP, "qwen2_moe": Qwen2-MoE
# with 8 experts of which each token takes 2 and a shared expert, and "gemma2": Gemma 2 with
# 8 query / 4 KV heads of 144, a sliding window on alternate layers and logit soft-capping).
# An older build (kernlens_base) must give the same JSON, or numbers within 1e-12 relative
# (sums over more than 4,096 launches are taken in fixed stretches since 3b0d365).
set -uo pipefail
out=${1:?usage: trace_reader_unseen.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
devrun=$root/build/devrun
export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$out"
status=0
for family in ${FAMILIES:-neox phi3}; do
  trace=$out/$family.json
  python3 - "$family" "$trace" <<'PY' 2>&1 | tail -3
import sys
sys.path.insert(0, "examples/workloads")
import transformers
import llm_stages
family, trace = sys.argv[1], sys.argv[2]
llm_stages.CONFIGS["neox"] = lambda: transformers.GPTNeoXConfig(
    hidden_size=1536, intermediate_size=6144, num_hidden_layers=6, num_attention_heads=12,
    vocab_size=50432, max_position_embeddings=2048)
llm_stages.CONFIGS["phi3"] = lambda: transformers.Phi3Config(
    hidden_size=1280, intermediate_size=3584, num_hidden_layers=6, num_attention_heads=20,
    num_key_value_heads=5, vocab_size=32064, max_position_embeddings=4096)
llm_stages.CONFIGS["falcon"] = lambda: transformers.FalconConfig(
    hidden_size=1152, num_hidden_layers=5, num_attention_heads=18, multi_query=True,
    vocab_size=65024, max_position_embeddings=2048)
llm_stages.CONFIGS["gemma"] = lambda: transformers.GemmaConfig(
    hidden_size=1024, intermediate_size=4096, num_hidden_layers=5, num_attention_heads=8,
    num_key_value_heads=2, head_dim=128, vocab_size=32000, max_position_embeddings=2048)
llm_stages.CONFIGS["granite"] = lambda: transformers.GraniteConfig(
    hidden_size=1024, intermediate_size=2816, num_hidden_layers=6, num_attention_heads=16,
    num_key_value_heads=4, vocab_size=49152, max_position_embeddings=2048,
    embedding_multiplier=12.0, attention_multiplier=0.0078125, residual_multiplier=0.22, logits_scaling=8.0)
llm_stages.CONFIGS["olmo2"] = lambda: transformers.Olmo2Config(
    hidden_size=1280, intermediate_size=3456, num_hidden_layers=5, num_attention_heads=10,
    num_key_value_heads=10, vocab_size=50304, max_position_embeddings=2048)
llm_stages.CONFIGS["cohere"] = lambda: transformers.CohereConfig(
    hidden_size=1152, intermediate_size=3072, num_hidden_layers=5, num_attention_heads=12,
    num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048, logit_scale=0.0625)
llm_stages.CONFIGS["gptj"] = lambda: transformers.GPTJConfig(
    n_embd=1024, n_layer=5, n_head=16, rotary_dim=32, vocab_size=50400, n_positions=2048)
llm_stages.CONFIGS["stablelm"] = lambda: transformers.StableLmConfig(
    hidden_size=1024, intermediate_size=2816, num_hidden_layers=5, num_attention_heads=16,
    num_key_value_heads=4, vocab_size=50304, max_position_embeddings=2048, partial_rotary_factor=0.25)
llm_stages.CONFIGS["qwen3"] = lambda: transformers.Qwen3Config(
    hidden_size=896, intermediate_size=2432, num_hidden_layers=6, num_attention_heads=16,
    num_key_value_heads=8, head_dim=64, vocab_size=37888, max_position_embeddings=2048)
llm_stages.CONFIGS["mixtral"] = lambda: transformers.MixtralConfig(
    hidden_size=1024, intermediate_size=2048, num_hidden_layers=4, num_attention_heads=16,
    num_key_value_heads=4, num_local_experts=4, num_experts_per_tok=2, vocab_size=32000,
    max_position_embeddings=2048)
llm_stages.CONFIGS["starcoder2"] = lambda: transformers.Starcoder2Config(
    hidden_size=1024, intermediate_size=4096, num_hidden_layers=5, num_attention_heads=16,
    num_key_value_heads=4, vocab_size=49152, max_position_embeddings=2048)
llm_stages.CONFIGS["qwen2_moe"] = lambda: transformers.Qwen2MoeConfig(
    hidden_size=768, intermediate_size=2048, moe_intermediate_size=512, shared_expert_intermediate_size=1024,
    num_hidden_layers=4, num_attention_heads=12, num_key_value_heads=4, num_experts=8, num_experts_per_tok=2,
    vocab_size=32000, max_position_embeddings=2048)
llm_stages.CONFIGS["gemma2"] = lambda: transformers.Gemma2Config(
    hidden_size=1152, intermediate_size=4608, num_hidden_layers=6, num_attention_heads=8,
    num_key_value_heads=4, head_dim=144, sliding_window=256, vocab_size=32000, max_position_embeddings=2048,
    attn_logit_softcapping=50.0, final_logit_softcapping=30.0)
sys.argv = ["llm_stages.py", "--model", family, "--batch", "6", "--prompt", "384",
            "--decode-steps", "48", "--torch-trace", trace]
llm_stages.main()
PY
  [[ -s $trace ]] || { echo "$family: no trace written"; status=1; continue; }
  echo "== $family: $(du -h "$trace" | cut -f1), $(grep -o '"cat": "kernel"' "$trace" | wc -l) kernel events"
  python3 tests/independent/check_pytorch_totals.py --kernlens "$devrun/kernlens" "$trace" || status=1
  gzip -k -6 "$trace"
  sums=()
  for t in 1 2 16; do
    sums+=("threads=$t $("$devrun/kernlens" analyze "$trace" --format json --threads "$t" | md5sum | cut -c1-32)")
  done
  sums+=("portable $(KERNLENS_SIMD=portable "$devrun/kernlens" analyze "$trace" --format json --threads 2 | md5sum | cut -c1-32)")
  # The gzipped trace's analysis names its own path: that line is made the plain file's.
  sums+=("gzip $("$devrun/kernlens" analyze "$trace.gz" --format json --threads 2 |
    sed 's/"path": "\(.*\)\.gz"/"path": "\1"/' | md5sum | cut -c1-32)")
  printf '%s\n' "${sums[@]}"
  distinct=$(printf '%s\n' "${sums[@]}" | awk '{print $2}' | sort -u | wc -l)
  [[ $distinct == 1 ]] && echo "$family: one analysis from every path" || { echo "$family: the paths differ"; status=1; }
  if [[ -x $devrun/kernlens_base ]]; then  # an older build: the same, or within the last digits
    "$devrun/kernlens" analyze "$trace" --format json > "$out/new.json"
    "$devrun/kernlens_base" analyze "$trace" --format json > "$out/base.json"
    python3 - "$out/base.json" "$out/new.json" <<'PY'
import json, sys
differ, worst = [], 0.0
def walk(a, b, path):
    global worst
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        for k in a: walk(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)): walk(x, y, f"{path}[{i}]")
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if a != b:
            worst = max(worst, abs(a - b) / max(abs(a), abs(b)))
            differ.append(path)
    elif a != b:
        sys.exit(f"base: differs at {path}: {str(a)[:80]} / {str(b)[:80]}")
walk(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), "")
print("base: the same JSON" if not differ else
      f"base: {len(differ)} numbers differ, by at most {worst:.1e} relative (first {differ[0]})")
sys.exit(0 if worst < 1e-12 else 1)
PY
    (( $? == 0 )) || status=1
    rm -f "$out/new.json" "$out/base.json"
  fi
  "$devrun/kernlens" analyze "$trace" --format text > "$out/$family.analysis.txt" 2>&1
  rm -f "$trace"  # the .gz stays for the record
done
exit $status
