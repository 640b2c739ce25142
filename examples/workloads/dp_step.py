#!/usr/bin/env python3
"""A data-parallel training step under torch.distributed (DDP over NCCL), for per-rank profiling.

Every rank holds the whole llama-like MLP stack, runs forward and backward on its own batch,
and DDP all-reduces the gradients in buckets while backward runs (the overlap of communication
with computation that the rank analysis measures). Stages are NVTX ranges: "warmup", then
"train_step" (--steps of them).
--slow-rank R --slow-ms M makes rank R sleep M ms before each backward: the straggler.
--torch-trace DIR writes each rank's PyTorch profiler trace (DIR/rank-N.json.gz) of the
measured steps.

    torchrun --nproc-per-node 2 dp_step.py --layers 4 --batch 8 --seq 256
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--inter", type=int, default=2816)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--slow-ms", type=float, default=0.0)
    p.add_argument("--torch-trace", default="")
    a = p.parse_args()
    rank = int(os.environ.get("RANK", 0))
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl" if torch.cuda.device_count() > local else "gloo")
    torch.manual_seed(0)
    blocks = []
    for _ in range(a.layers):
        blocks += [torch.nn.Linear(a.hidden, a.inter, bias=False), torch.nn.SiLU(),
                   torch.nn.Linear(a.inter, a.hidden, bias=False), torch.nn.LayerNorm(a.hidden)]
    model = DDP(torch.nn.Sequential(*blocks).cuda().to(torch.bfloat16), device_ids=[local])
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(a.batch, a.seq, a.hidden, device="cuda", dtype=torch.bfloat16)

    def step(name):
        torch.cuda.nvtx.range_push(name)
        loss = model(x).float().pow(2).mean()
        if rank == a.slow_rank and a.slow_ms > 0:
            torch.cuda.synchronize()
            time.sleep(a.slow_ms / 1000)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()

    step("warmup")
    prof = None
    if a.torch_trace:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA])
        prof.start()
        dist.barrier()  # the ranks' profilers start at different speeds: enter the steps together
        torch.cuda.synchronize()
    for _ in range(a.steps):
        step("train_step")
    if prof:
        prof.stop()
        os.makedirs(a.torch_trace, exist_ok=True)
        prof.export_chrome_trace(os.path.join(a.torch_trace, f"rank-{rank}.json.gz"))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
