#!/usr/bin/env python3
"""Models of known work for checking kernlens's FLOPs and MFU against an analytic count.

Builds a model from a transformers config with random weights (no download), writes that
config (the config.json transformers saves) where --write-config says, prints the model's
analytic FLOPs per stage (counted here, in Python, independently of kernlens's C++), then runs
--warmup generations inside an NVTX range "warmup", then the timed one: one prefill over a batch of
prompts and greedy decode steps with a KV cache, each inside an NVTX range "prefill" / "decode" (the default domain).

    python3 ground_truth.py --model dense_gqa --write-config dense_gqa.json
    python3 ground_truth.py --model moe --analytic-only

The models (shapes no test of kernlens uses):
    dense_gqa  Mistral family, grouped-query attention (16 heads, 4 KV heads), SDPA attention
    moe        Mixtral family: 8 experts, top-2, GQA 16/4
    eager      Qwen2 family with the eager attention path (matmul + softmax, full P x P scores)
"""
import argparse
import contextlib
import json
import time

MODELS = {
    "dense_gqa": dict(family="MistralConfig", attn="sdpa", batch=8, prompt=512, config=dict(
        hidden_size=2048, intermediate_size=5632, num_hidden_layers=4, num_attention_heads=16,
        num_key_value_heads=4, vocab_size=32000, max_position_embeddings=4096, sliding_window=None)),
    "moe": dict(family="MixtralConfig", attn="sdpa", batch=8, prompt=384, config=dict(
        hidden_size=1024, intermediate_size=1792, num_hidden_layers=4, num_attention_heads=16,
        num_key_value_heads=4, num_local_experts=8, num_experts_per_tok=2, vocab_size=32000,
        max_position_embeddings=4096, sliding_window=None)),
    "eager": dict(family="Qwen2Config", attn="eager", batch=4, prompt=512, config=dict(
        hidden_size=1536, intermediate_size=4096, num_hidden_layers=4, num_attention_heads=12,
        num_key_value_heads=2, vocab_size=32000, max_position_embeddings=4096, use_sliding_window=False)),
}


def analytic_flops(c, batch, prompt, decode_steps):
    """FLOPs of one prefill and of one generation's decode steps: every matrix product, 2 per
    multiply-add; causal attention; the LM head on every prompt token, then one a sequence."""
    h, layers, heads = c.hidden_size, c.num_hidden_layers, c.num_attention_heads
    kv_heads = getattr(c, "num_key_value_heads", None) or heads
    head_dim = getattr(c, "head_dim", None) or h // heads
    q, kv, inter = heads * head_dim, kv_heads * head_dim, c.intermediate_size
    experts = getattr(c, "num_local_experts", 0)
    mlp = 3 * 2 * h * inter
    if experts:
        mlp = 2 * h * experts + c.num_experts_per_tok * mlp  # router, then the chosen experts
    per_token_layer = 2 * h * q + 2 * 2 * h * kv + 2 * q * h + mlp
    lm_head = 2 * h * c.vocab_size

    def run(tokens, pairs):  # pairs: query-key pairs of causal attention, all sequences
        return layers * (tokens * per_token_layer + 4 * q * pairs) + tokens * lm_head

    prefill = run(batch * prompt, batch * prompt * (prompt + 1) // 2)
    decode = run(batch * decode_steps, batch * sum(prompt + s + 1 for s in range(decode_steps)))
    return prefill, decode


def build(name):
    import transformers
    spec = MODELS[name]
    return getattr(transformers, spec["family"])(**spec["config"]), spec


@contextlib.contextmanager
def stage(torch, name):
    with torch.cuda.nvtx.range(name):
        yield


def generate(torch, model, input_ids, decode_steps):
    with torch.inference_mode():
        with stage(torch, "prefill"):
            out = model(input_ids=input_ids, use_cache=True)
            past, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
            torch.cuda.synchronize()
        with stage(torch, "decode"):
            for _ in range(decode_steps):
                out = model(input_ids=token, past_key_values=past, use_cache=True)
                past, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
            torch.cuda.synchronize()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--batch", type=int, help="default: the model's")
    parser.add_argument("--prompt", type=int, help="prompt tokens (default: the model's)")
    parser.add_argument("--decode-steps", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1, help="generations before the timed one")
    parser.add_argument("--write-config", metavar="PATH", help="write the model's config.json here")
    parser.add_argument("--analytic-only", action="store_true", help="print the analytic FLOPs; run nothing")
    args = parser.parse_args()

    config, spec = build(args.model)
    batch, prompt = args.batch or spec["batch"], args.prompt or spec["prompt"]
    if args.write_config:
        config.to_json_file(args.write_config)
    prefill, decode = analytic_flops(config, batch, prompt, args.decode_steps)
    runs = 1  # the timed generation; the warm-ups run in an NVTX range "warmup" (stages warmup/...)
    print("ground_truth: " + json.dumps({
        "model": args.model, "model_type": config.model_type, "attention": spec["attn"], "batch": batch,
        "prompt_tokens": prompt, "decode_steps": args.decode_steps, "runs": runs,
        "analytic_prefill_flops": prefill, "analytic_decode_flops": decode}))
    if args.analytic_only:
        return

    import torch
    import transformers
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16,
                                                          attn_implementation=spec["attn"])
    model = model.to("cuda").eval()
    input_ids = torch.randint(0, config.vocab_size, (batch, prompt), device="cuda")
    start = time.perf_counter()
    with torch.cuda.nvtx.range("warmup"):  # lazy initialisation and autotuning stay out of prefill/decode
        for _ in range(args.warmup):
            generate(torch, model, input_ids, args.decode_steps)
    torch.cuda.synchronize()
    generate(torch, model, input_ids, args.decode_steps)
    print(f"ground_truth: model={args.model} runs={runs} wall_s={time.perf_counter() - start:.3f} "
          f"experts_implementation={getattr(model.config, '_experts_implementation', None)}")


if __name__ == "__main__":
    main()
