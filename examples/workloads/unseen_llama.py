#!/usr/bin/env python3
"""A llama-like model kernlens never ran, for measuring what `kernlens profile` costs.

Builds the model from a transformers LlamaConfig with random weights (no download; built on
the CPU and moved to the GPU), or loads such weights from a checkpoint written once with
--save-checkpoint (--checkpoint DIR, as a script that serves a model would), then runs
--warmup prefills and --iters measured prefills over one batch of prompts, each prefill in
an NVTX push/pop range "prefill", then --decode-steps greedy decode steps in a range
"decode". Shapes: hidden 2048, 16 heads of 128 (8 KV heads), MLP 5632, vocab 32000; the
number of layers is --layers (the cost measurement uses 4 and 8, the same kernels repeated).

    python3 unseen_llama.py --layers 4 --batch 16 --prompt 512
    python3 unseen_llama.py --layers 8 --checkpoint /tmp/ckpt --save-checkpoint   # once
    python3 unseen_llama.py --layers 8 --checkpoint /tmp/ckpt --batch 16 --prompt 512
"""
import argparse
import atexit
import os
import sys
import time

import torch
import transformers

IMPORTS_DONE = time.time()


def process_start_time():
    """When this process started, in seconds since the epoch (to the kernel's 10 ms tick)."""
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    with open("/proc/self/stat") as f:
        ticks = float(f.read().rsplit(")", 1)[1].split()[19])
    return time.time() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))


class Phases:
    """--phases: prints when each step ended, in seconds since the process started (stderr)."""

    def __init__(self, on):
        self.on = on
        self.start = process_start_time() if on else 0.0
        if on:
            self.mark("imports", IMPORTS_DONE)
            atexit.register(self.mark, "atexit")

    def mark(self, name, at=None):
        if self.on:
            t = (time.time() if at is None else at) - self.start
            print(f"unseen_llama phase {name} {t:.3f}", file=sys.stderr, flush=True)


def llama_config(layers):
    return transformers.LlamaConfig(
        hidden_size=2048, intermediate_size=5632, num_hidden_layers=layers,
        num_attention_heads=16, num_key_value_heads=8, vocab_size=32000,
        max_position_embeddings=4096)


def checkpoint_path(folder, layers, dtype):
    return os.path.join(folder, f"unseen_llama_{layers}layers_{str(dtype).split('.')[-1]}")


def save_checkpoint(folder, layers, dtype):
    """Random weights saved as a checkpoint (safetensors), for --checkpoint to load."""
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(llama_config(layers), dtype=dtype)
    model.save_pretrained(checkpoint_path(folder, layers, dtype))


def build_model(layers, dtype, phases, checkpoint=None):
    """Random weights built on the CPU (slow: 30-40 s for 8 layers on the H100 machine), or
    loaded from a checkpoint --save-checkpoint wrote, as a script that serves a model would."""
    config = llama_config(layers)
    if checkpoint:
        model = transformers.AutoModelForCausalLM.from_pretrained(checkpoint_path(checkpoint, layers, dtype), dtype=dtype)
    else:
        torch.manual_seed(0)
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=dtype)
    phases.mark("model built on the CPU")
    model = model.to("cuda").eval()
    phases.mark("model on the GPU")
    return model, config


@torch.inference_mode()
def prefill(model, input_ids):
    with torch.cuda.nvtx.range("prefill"):
        out = model(input_ids=input_ids, use_cache=True)
        token = out.logits[:, -1:].argmax(-1)
        torch.cuda.synchronize()
    return out.past_key_values, token


@torch.inference_mode()
def decode(model, past, token, steps):
    with torch.cuda.nvtx.range("decode"):
        for _ in range(steps):
            out = model(input_ids=token, past_key_values=past, use_cache=True)
            past, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
        torch.cuda.synchronize()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--prompt", type=int, default=512, help="prompt length in tokens")
    parser.add_argument("--warmup", type=int, default=1, help="prefills before the measured ones")
    parser.add_argument("--iters", type=int, default=1, help="measured prefills")
    parser.add_argument("--decode-steps", type=int, default=4)
    parser.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    parser.add_argument("--checkpoint", metavar="DIR",
                        help="load the weights from the checkpoint --save-checkpoint wrote under DIR")
    parser.add_argument("--save-checkpoint", action="store_true",
                        help="write random weights as a checkpoint under --checkpoint DIR and exit (no GPU)")
    parser.add_argument("--phases", action="store_true",
                        help="print when each step ended, in seconds since the process started (stderr)")
    args = parser.parse_args()
    phases = Phases(args.phases)
    phases.mark(f"arguments (torch threads {torch.get_num_threads()})")

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    if args.save_checkpoint:
        if not args.checkpoint:
            parser.error("--save-checkpoint needs --checkpoint DIR")
        save_checkpoint(args.checkpoint, args.layers, dtype)
        return
    model, config = build_model(args.layers, dtype, phases, args.checkpoint)
    input_ids = torch.randint(0, config.vocab_size, (args.batch, args.prompt), device="cuda")
    for _ in range(args.warmup):
        prefill(model, input_ids)
    phases.mark("warm-up prefills")
    times = []
    for _ in range(args.iters):
        start = time.perf_counter()
        past, token = prefill(model, input_ids)
        times.append(time.perf_counter() - start)
    phases.mark("measured prefills")
    decode(model, past, token, args.decode_steps)
    phases.mark("decode")
    print(f"unseen_llama: layers={args.layers} batch={args.batch} prompt={args.prompt} "
          f"prefill_s={min(times):.4f}")


if __name__ == "__main__":
    main()
