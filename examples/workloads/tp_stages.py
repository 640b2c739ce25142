#!/usr/bin/env python3
"""A tensor-parallel llama-like stack under torch.distributed, for per-rank profiling.

Run it with torchrun; every rank holds 1/world of each layer's weights (Megatron style:
q/k/v and gate/up split by columns, o and down split by rows) and sums its partial outputs with
one all-reduce after attention and one after the MLP, as 2-way tensor parallelism does.
Stages are NVTX ranges: "warmup" (left out of headline figures), then "prefill", then
"decode" (--decode-steps single-token steps).

The backend is NCCL when the node has a GPU per rank; with fewer GPUs (one GPU shared by
all ranks, where NCCL refuses to run) it is gloo, and the all-reduce goes through host memory
(a device-to-host copy, the collective on the CPU, a host-to-device copy).

--slow-rank R --slow-ms M makes rank R sleep M ms before each all-reduce, so the other ranks
wait in their collectives and R is the straggler.
--torch-trace DIR also writes each rank's PyTorch profiler trace (DIR/rank-N.json.gz) of the
measured prefill.

    torchrun --nproc-per-node 2 tp_stages.py --layers 2 --batch 4 --prompt 128
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F


class Layer:
    def __init__(self, hidden, heads, inter, world, dtype, device):
        g = lambda *shape: torch.randn(*shape, dtype=dtype, device=device) * 0.02
        self.heads = heads // world
        self.head_dim = hidden // heads
        local = self.heads * self.head_dim
        self.qkv = g(hidden, 3 * local)
        self.o = g(local, hidden)
        self.gate_up = g(hidden, 2 * (inter // world))
        self.down = g(inter // world, hidden)

    def forward(self, x, reduce):
        b, s, h = x.shape
        q, k, v = (x @ self.qkv).split(self.heads * self.head_dim, dim=-1)
        shape = (b, s, self.heads, self.head_dim)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=s > 1)
        x = x + reduce(a.transpose(1, 2).reshape(b, s, -1) @ self.o)
        gate, up = (x @ self.gate_up).chunk(2, dim=-1)
        return x + reduce((F.silu(gate) * up) @ self.down)


def make_reduce(args, rank, backend):
    def reduce(t):
        if rank == args.slow_rank and args.slow_ms > 0:
            torch.cuda.synchronize()
            time.sleep(args.slow_ms / 1000)
        if backend == "nccl":
            dist.all_reduce(t)
            return t
        host = t.float().cpu()
        dist.all_reduce(host)
        return host.to(t.device, t.dtype)
    return reduce


@torch.inference_mode()
def run(layers, x, reduce, name):
    with torch.cuda.nvtx.range(name):
        for layer in layers:
            x = layer.forward(x, reduce)
        torch.cuda.synchronize()
    return x


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--inter", type=int, default=2816)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--prompt", type=int, default=128)
    parser.add_argument("--decode-steps", type=int, default=4)
    parser.add_argument("--slow-rank", type=int, default=-1)
    parser.add_argument("--slow-ms", type=float, default=0.0)
    parser.add_argument("--torch-trace", default="")
    args = parser.parse_args()

    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    gpus = torch.cuda.device_count()
    device = torch.device("cuda", rank % gpus)
    torch.cuda.set_device(device)
    backend = "nccl" if gpus >= world else "gloo"
    dist.init_process_group(backend, device_id=device if backend == "nccl" else None)
    torch.manual_seed(rank)
    dtype = torch.bfloat16
    layers = [Layer(args.hidden, args.heads, args.inter, world, dtype, device) for _ in range(args.layers)]
    reduce = make_reduce(args, rank, backend)
    prompt = torch.randn(args.batch, args.prompt, args.hidden, dtype=dtype, device=device)
    run(layers, prompt, reduce, "warmup")
    if args.torch_trace:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            # The profiler starts at a different speed on each rank: without this, a rank would
            # wait in its first all-reduce for the other's profiler, not for the slowed rank.
            dist.barrier()
            torch.cuda.synchronize()
            run(layers, prompt, reduce, "prefill")
        os.makedirs(args.torch_trace, exist_ok=True)
        prof.export_chrome_trace(os.path.join(args.torch_trace, f"rank-{rank}.json.gz"))
    else:
        run(layers, prompt, reduce, "prefill")
    token = prompt[:, -1:]
    for _ in range(args.decode_steps):
        token = run(layers, token, reduce, "decode")
    dist.barrier()
    if rank == 0:
        print(f"tp_stages: world={world} backend={backend} layers={args.layers} "
              f"batch={args.batch} prompt={args.prompt}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
