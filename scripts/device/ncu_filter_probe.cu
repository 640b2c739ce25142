// Probes how ncu's kernel filters count launches (kernlens issue 6): --kernel-id invocation
// numbers with a regex name, --filter-mode per-launch-config, NVTX ranges and --kill.
// Prints one line per launch before it: "launch <n> <kernel> <ordinal of that kernel>".
//   nvcc -arch=sm_90 -o ncu_filter_probe scripts/device/ncu_filter_probe.cu
#include <cstdio>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void kA(float* x, int i) { x[threadIdx.x] += i; }
__global__ void kB(float* x, int i) { x[threadIdx.x] *= i; }
__global__ void kC(float* x, int i) { x[threadIdx.x] -= i; }

static int launches = 0, ord[3] = {0, 0, 0};
static void launch(int which, float* x, int grid) {
  const char* names[] = {"kA", "kB", "kC"};
  std::printf("launch %d %s %d grid %d\n", launches++, names[which], ++ord[which], grid);
  std::fflush(stdout);
  if (which == 0) kA<<<grid, 32>>>(x, launches);
  if (which == 1) kB<<<grid, 32>>>(x, launches);
  if (which == 2) kC<<<grid, 32>>>(x, launches);
  cudaDeviceSynchronize();
}

int main() {
  float* x = nullptr;
  cudaMalloc(&x, 4096 * sizeof(float));
  for (int i = 0; i < 3; ++i) launch(0, x, 1);  // before the range
  nvtxRangePushA("prefill");
  for (int i = 0; i < 6; ++i) {
    launch(0, x, 1);
    launch(1, x, 1);
    if (i % 2 == 0) launch(2, x, 1 + i % 4);  // grids 1 and 3
  }
  nvtxRangePop();
  for (int i = 0; i < 2; ++i) launch(1, x, 1);  // after the range
  std::printf("program end\n");
  cudaFree(x);
  return 0;
}
