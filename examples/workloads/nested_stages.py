#!/usr/bin/env python3
"""Nested record_function stages under a torch.profiler schedule, for kernlens's PyTorch trace
reader: the shapes of stage that a small flat workload (llm_stages.py) does not produce.

Writes two PyTorch profiler chrome traces of a tiny GEMM "model" (torch only, no download):

  OUT/nested_stages_trace.json.gz   torch.profiler.schedule(wait=1, warmup=1, active=2), so
      the recorded steps are "ProfilerStep#2" and "ProfilerStep#3". Each step runs
      "prefill" (a kernel of its own, then "layer0" and "layer1", then another kernel of its
      own) and "decode" (three "layer0" ranges and nothing else: no kernel launched directly
      inside it), then "side": one GEMM on a second CUDA stream.
  OUT/open_range_trace.json.gz      a record_function entered before the profiler starts and
      left only after it stops: a range that never ends inside the trace.

    python3 nested_stages.py OUT
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.CUDA]


def layer(x, w):
    return torch.relu(x @ w)


def step(x, w, side_stream):
    with record_function("prefill"):
        x = x * 0.5
        for i in range(2):
            with record_function(f"layer{i}"):
                x = layer(x, w)
        x = x + 1.0
    with record_function("decode"):
        for _ in range(3):
            with record_function("layer0"):
                x = layer(x, w)
    with record_function("side"):
        side_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side_stream):
            y = x @ w
        torch.cuda.current_stream().wait_stream(side_stream)
    torch.cuda.synchronize()
    return x + y


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    torch.manual_seed(0)
    x = torch.randn(256, 256, device="cuda")
    w = torch.randn(256, 256, device="cuda") / 16
    side_stream = torch.cuda.Stream()
    step(x, w, side_stream)  # warm up cuBLAS outside the traces
    torch.cuda.synchronize()

    def save(prof):
        prof.export_chrome_trace(f"{out}/nested_stages_trace.json.gz")

    with profile(activities=ACTIVITIES, schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=save) as prof:
        for _ in range(4):
            x = step(x, w, side_stream)
            prof.step()

    unfinished = record_function("unfinished")
    unfinished.__enter__()
    with profile(activities=ACTIVITIES) as prof:
        with record_function("finished"):
            x = layer(x, w)
        x = layer(x, w)
        torch.cuda.synchronize()
    prof.export_chrome_trace(f"{out}/open_range_trace.json.gz")
    unfinished.__exit__(None, None, None)
    print("nested_stages: wrote", out)


if __name__ == "__main__":
    main()
