// A tiny CUDA program with a known, fixed kernel/NVTX structure. kernlens uses its
// Nsight Compute exports as test fixtures: every count below is known in advance.
//
//   setup (push/pop, default domain):          fill x2
//   3 x step (push/pop, default domain):
//       prefill (push/pop, domain "kernlens_demo"): saxpy, block_sum<256>
//       io (start/end, default domain):            scale
//       decode/layer0 (nested push/pop):           scale, scale
//   no range:                                   scale, then a memset (not a kernel)
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <cstdio>

namespace demo {
__global__ void fill(float* p, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}
}  // namespace demo

__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void scale(int n, float a, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= a;
}

template <int kBlock>
__global__ void block_sum(const float* x, float* out, int n) {
  __shared__ float buf[kBlock];
  int i = blockIdx.x * kBlock + threadIdx.x;
  buf[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, buf[0]);
}

int main() {
  const int n = 1 << 22;
  float *x, *y, *sum;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMalloc(&sum, sizeof(float));
  const int threads = 256, blocks = (n + threads - 1) / threads;

  nvtxRangePushA("setup");
  demo::fill<<<blocks, threads>>>(x, n, 1.0f);
  demo::fill<<<blocks, threads>>>(y, n, 2.0f);
  nvtxRangePop();

  nvtxDomainHandle_t domain = nvtxDomainCreateA("kernlens_demo");
  nvtxEventAttributes_t attr = {};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = "prefill";

  for (int step = 0; step < 3; ++step) {
    nvtxRangePushA("step");
    nvtxDomainRangePushEx(domain, &attr);
    saxpy<<<blocks, threads>>>(n, 2.0f, x, y);
    block_sum<256><<<blocks, 256>>>(y, sum, n);
    nvtxDomainRangePop(domain);

    nvtxRangeId_t io = nvtxRangeStartA("io");
    scale<<<blocks, threads>>>(n, 0.5f, y);
    nvtxRangeEnd(io);

    nvtxRangePushA("decode");
    nvtxRangePushA("layer0");
    scale<<<blocks, threads>>>(n, 1.5f, y);
    scale<<<blocks / 4, threads>>>(n / 4, 1.5f, y);
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangePop();
  }
  scale<<<blocks, threads>>>(n, 1.0f, x);
  cudaMemset(sum, 0, sizeof(float));
  cudaDeviceSynchronize();
  float host = 0;
  cudaMemcpy(&host, sum, sizeof(float), cudaMemcpyDeviceToHost);
  std::printf("nvtx_demo done, sum=%g\n", host);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
