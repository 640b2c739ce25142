"""A small PyTorch program for ncu_attach_probe.sh: prints wall-clock stamps of its start-up
phases (imports, first CUDA call), then runs 3 GEMMs in an NVTX range `prefill`, twice."""
import sys
import time

t0 = time.time()
print(f"probe: start {t0:.3f}", flush=True)
import torch  # noqa: E402

print(f"probe: torch imported {time.time():.3f} (+{time.time() - t0:.2f} s)", flush=True)
a = torch.randn(2048, 2048, dtype=torch.bfloat16)  # CPU work before the first CUDA call
print(f"probe: first CUDA call at {time.time():.3f} (+{time.time() - t0:.2f} s)", flush=True)
a = a.cuda()
print(f"probe: on the GPU {time.time():.3f} (+{time.time() - t0:.2f} s)", flush=True)
for it in range(2):
    torch.cuda.nvtx.range_push("prefill")
    b = a
    for _ in range(3):
        b = b @ a
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
print(f"probe: done {time.time():.3f} (+{time.time() - t0:.2f} s)", flush=True)
sys.exit(0)
