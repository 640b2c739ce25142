#!/usr/bin/env python3
"""A small LLM inference workload with NVTX stages, for profiling with kernlens.

Builds a model from a transformers config with random weights (no download), runs one
prefill over a batch of prompts and then greedy decode steps with a KV cache. Each stage is
an NVTX push/pop range in the default domain: "prefill" and "decode" (one range around all
decode steps), so profilers can attribute every kernel to a stage; warm-up runs sit inside a
range "warmup" (their stages are "warmup/prefill" and "warmup/decode"). The same names are also
opened as torch.profiler.record_function ranges, which PyTorch profiler traces record (as
user_annotation / gpu_user_annotation events) while they do not record NVTX.

    python3 llm_stages.py --model llama --batch 4 --prompt 256 --decode-steps 15
    python3 llm_stages.py --torch-trace trace.json.gz   # also write a PyTorch profiler trace

Under `kernlens profile --repeat N` (KERNLENS_REPEAT=N in the environment) the measured
prefill and decode run N times (the default of --repeat), each time in its own "prefill" and
"decode" ranges: kernlens finds the repetitions by those ranges. --spin-cycles adds a spin
kernel of a known length (torch.cuda._sleep) after every forward pass, so that a kernel can be
slowed on purpose by a known fraction (compare's validation, scripts/device/compare_repeats.sh).
"""
import argparse
import contextlib
import os
import statistics
import time

import torch
import transformers

CONFIGS = {
    "llama": lambda: transformers.LlamaConfig(
        hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
        num_attention_heads=16, num_key_value_heads=16, vocab_size=32000,
        max_position_embeddings=2048),
    "qwen": lambda: transformers.Qwen2Config(
        hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
        num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
        max_position_embeddings=2048),
    "gpt2": lambda: transformers.GPT2Config(
        n_embd=1024, n_layer=8, n_head=16, vocab_size=32000, n_positions=2048),
    # Mixture of experts with GQA: 8 experts, 2 per token, 16 query / 4 KV heads.
    "mixtral": lambda: transformers.MixtralConfig(
        hidden_size=1024, intermediate_size=1408, num_hidden_layers=8,
        num_attention_heads=16, num_key_value_heads=4, num_local_experts=8,
        num_experts_per_tok=2, vocab_size=32000, max_position_embeddings=2048),
}


def build_model(name, dtype):
    config = CONFIGS[name]()
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config, torch_dtype=dtype)
    return model.to("cuda").eval(), config


@contextlib.contextmanager
def stage(name):
    """An NVTX range (for Nsight tools) and a record_function range (for PyTorch traces)."""
    with torch.cuda.nvtx.range(name), torch.profiler.record_function(name):
        yield


SPIN_CYCLES = 0  # --spin-cycles: GPU clock cycles of a spin kernel after every forward pass


def forward(model, **kwargs):
    out = model(**kwargs)
    if SPIN_CYCLES:
        torch.cuda._sleep(SPIN_CYCLES)
    return out


@torch.inference_mode()
def generate(model, input_ids, decode_steps):
    """One prefill and decode_steps greedy steps; returns the stages' wall times in seconds."""
    start = time.perf_counter()
    with stage("prefill"):
        out = forward(model, input_ids=input_ids, use_cache=True)
        past = out.past_key_values
        token = out.logits[:, -1:].argmax(-1)
        torch.cuda.synchronize()
    prefill_end = time.perf_counter()
    with stage("decode"):
        for _ in range(decode_steps):
            out = forward(model, input_ids=token, past_key_values=past, use_cache=True)
            past = out.past_key_values
            token = out.logits[:, -1:].argmax(-1)
        torch.cuda.synchronize()
    return prefill_end - start, time.perf_counter() - prefill_end


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(CONFIGS), default="llama")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--prompt", type=int, default=256, help="prompt length in tokens")
    parser.add_argument("--decode-steps", type=int, default=15)
    parser.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="bf16")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs before the measured one")
    parser.add_argument("--repeat", type=int, default=int(os.environ.get("KERNLENS_REPEAT", "1")),
                        help="measured runs (default: $KERNLENS_REPEAT or 1); the printed times are their medians")
    parser.add_argument("--spin-cycles", type=int, default=0,
                        help="a spin kernel of this many GPU cycles after every forward pass (0: none)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model")
    parser.add_argument("--sdpa-backend", choices=["default", "flash", "efficient", "cudnn", "math"],
                        default="default", help="force one scaled_dot_product_attention backend")
    parser.add_argument("--alternate-capture", action="store_true",
                        help="time --repeat pairs of runs, one inside cudaProfilerStart/Stop and one outside")
    parser.add_argument("--torch-trace", metavar="PATH",
                        help="also write a PyTorch profiler chrome trace of the measured run")
    args = parser.parse_args()
    global SPIN_CYCLES
    SPIN_CYCLES = args.spin_cycles

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    if args.sdpa_backend != "default":
        for backend in ("flash", "mem_efficient", "cudnn", "math"):
            enable = backend.startswith(args.sdpa_backend) or (backend == "mem_efficient" and
                                                                args.sdpa_backend == "efficient")
            getattr(torch.backends.cuda, f"enable_{backend}_sdp")(enable)
    model, config = build_model(args.model, dtype)
    if args.compile:
        model = torch.compile(model)
    input_ids = torch.randint(0, config.vocab_size, (args.batch, args.prompt), device="cuda")

    for _ in range(args.warmup):  # in a range of its own: --nvtx-include prefill leaves it out
        with stage("warmup"):
            generate(model, input_ids, args.decode_steps)
    torch.cuda.synchronize()

    if args.alternate_capture:
        alternate_capture(model, input_ids, args)
        return
    walls, prefills, decodes = [], [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        if args.torch_trace:
            activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
            with torch.profiler.profile(activities=activities, record_shapes=True) as prof:
                prefill_s, decode_s = generate(model, input_ids, args.decode_steps)
            prof.export_chrome_trace(args.torch_trace)
        else:
            prefill_s, decode_s = generate(model, input_ids, args.decode_steps)
        torch.cuda.synchronize()
        walls.append(time.perf_counter() - start)
        prefills.append(prefill_s)
        decodes.append(decode_s)
    print(f"llm_stages: model={args.model} batch={args.batch} prompt={args.prompt} "
          f"decode_steps={args.decode_steps} repeat={args.repeat} wall_s={statistics.median(walls):.4f} "
          f"prefill_s={statistics.median(prefills):.4f} decode_s={statistics.median(decodes):.4f}")


def alternate_capture(model, input_ids, args):
    """A profiler's overhead within one process: --repeat pairs of generate() calls, one inside
    cudaProfilerStart/Stop (a tool capturing only there, e.g. the kernlens tracer with
    KERNLENS_TRACE_CAPTURE=cudaProfilerApi, traces it) and one outside, in ABBA order so that a
    drifting machine hits both alike. Prints the medians and the median per-pair ratio."""
    captured, uncaptured, ratios = [], [], []
    for pair in range(args.repeat):
        times = {}
        for inside in ((True, False) if pair % 2 == 0 else (False, True)):
            if inside:
                torch.cuda.profiler.start()
            times[inside] = generate(model, input_ids, args.decode_steps)[1]
            if inside:
                torch.cuda.profiler.stop()
        captured.append(times[True])
        uncaptured.append(times[False])
        ratios.append(times[True] / times[False])
    print(f"llm_stages: model={args.model} batch={args.batch} prompt={args.prompt} "
          f"decode_steps={args.decode_steps} pairs={args.repeat} "
          f"decode_s_captured={statistics.median(captured):.4f} decode_s_uncaptured={statistics.median(uncaptured):.4f} "
          f"decode_ratio={statistics.median(ratios):.4f} "
          f"decode_ratio_quartiles={statistics.quantiles(ratios, n=4)[0]:.4f},{statistics.quantiles(ratios, n=4)[2]:.4f}")

if __name__ == "__main__":
    main()
