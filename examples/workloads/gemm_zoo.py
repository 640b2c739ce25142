#!/usr/bin/env python3
"""Matrix products in every precision an LLM uses, one NVTX range each, so profilers see
the GEMM kernels each library picks: fp32, tf32, fp16, bf16, fp8 (torch._scaled_mm), int8
(torch._int_mm), plus a batched bf16 GEMM and a bias-fused linear.

    python3 gemm_zoo.py [--size 1024] [--torch-trace trace.json.gz]
"""
import argparse

import torch


def run_all(n):
    dev = "cuda"
    a32, b32 = torch.randn(n, n, device=dev), torch.randn(n, n, device=dev)
    cases = []
    torch.backends.cuda.matmul.allow_tf32 = False
    cases.append(("fp32", lambda: a32 @ b32))
    cases.append(("tf32", lambda: (setattr(torch.backends.cuda.matmul, "allow_tf32", True), a32 @ b32)[1]))
    a16, b16 = a32.half(), b32.half()
    cases.append(("fp16", lambda: a16 @ b16))
    abf, bbf = a32.bfloat16(), b32.bfloat16()
    cases.append(("bf16", lambda: abf @ bbf))
    bias = torch.randn(n, device=dev, dtype=torch.bfloat16)
    cases.append(("bf16_linear_bias", lambda: torch.nn.functional.linear(abf, bbf, bias)))
    batched = torch.randn(8, n // 4, n // 4, device=dev, dtype=torch.bfloat16)
    cases.append(("bf16_bmm", lambda: torch.bmm(batched, batched)))
    if hasattr(torch, "float8_e4m3fn"):
        a8 = a32.to(torch.float8_e4m3fn)
        b8 = b32.to(torch.float8_e4m3fn).t().contiguous().t()
        one = torch.tensor(1.0, device=dev)
        cases.append(("fp8", lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one,
                                                      out_dtype=torch.bfloat16)))
    ai8 = torch.randint(-8, 8, (n, n), device=dev, dtype=torch.int8)
    bi8 = torch.randint(-8, 8, (n, n), device=dev, dtype=torch.int8)
    cases.append(("int8", lambda: torch._int_mm(ai8, bi8)))
    for name, fn in cases:
        with torch.cuda.nvtx.range(name):
            try:
                fn()
            except Exception as e:  # a precision this GPU/torch lacks: say so, go on
                print(f"gemm_zoo: {name} skipped: {e}")
    torch.cuda.synchronize()


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--torch-trace", metavar="PATH")
    args = parser.parse_args()
    run_all(args.size)  # warm-up: library heuristics and handles
    if args.torch_trace:
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
            run_all(args.size)
        prof.export_chrome_trace(args.torch_trace)
    else:
        run_all(args.size)
    print("gemm_zoo done")


if __name__ == "__main__":
    main()
