// The small .kltrace fixture (tests/fixtures/kltrace/decode_small.kltrace), made with
// kernlens's own writer (format/kltrace.h), not captured by the tracer on a GPU: one process of
// an LLM decode on an H100 with real kernel names (from tests/fixtures/names), a prefill and a
// decode push/pop range, a start/end range in a domain, copies, a memset, and one range left
// open at exit. Rewritten by `build/make_kltrace_fixture tests/fixtures/kltrace/decode_small.kltrace`;
// kltrace_test checks that the committed file is what this function makes.
#pragma once

#include <string>

#include "kernlens/format/kltrace.h"

namespace kernlens::test {

inline trace_format::TraceData small_decode_trace() {
  namespace tf = trace_format;
  tf::TraceData t;
  tf::StringInterner strings(t.strings);
  t.process = {4242, 4200, strings.intern("python3 examples/workloads/llm_stages.py --decode-steps 2"), 130001,
               1'000'000, 9'000'000};
  t.devices.push_back(tf::DeviceRecord{0, strings.intern("NVIDIA H100 80GB HBM3"), 9, 0, 132, 2048, 233472,
                                       52428800, 1980000, 0, 85'030'000'000ULL});
  const std::uint32_t gemm = strings.intern("nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_TNT");
  const std::uint32_t flash = strings.intern(
      "_ZN13pytorch_flash16flash_fwd_kernelI23Flash_fwd_kernel_traitsILi64ELi128ELi128ELi4ELb0ELb0EN7cutlass10bfloat16_"
      "tE19Flash_kernel_traitsILi64ELi128ELi128ELi4ES3_EELb0ELb1ELb0ELb0ELb1ELb1ELb0ELb0EEEvNS_16Flash_fwd_paramsE");
  const std::uint32_t reduce =
      strings.intern("_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7MeanOpsIffffEEjfLi4ELi4EEEEEvT1_");
  constexpr std::uint32_t kThread = 4242;
  std::uint32_t correlation = 10;
  std::uint64_t cpu_ns = 2'000'000;
  std::uint64_t gpu_ns = 2'050'000;
  // One launch: its API call on the CPU, then the kernel on the GPU.
  auto launch = [&](std::uint32_t name, std::uint32_t grid_x, std::uint64_t duration_ns) {
    t.api_calls.push_back(tf::ApiCallRecord{correlation, kThread, cpu_ns, cpu_ns + 4'000});
    gpu_ns = std::max(gpu_ns, cpu_ns + 6'000);
    t.kernels.push_back(tf::KernelRecord{name, 0, 1, 7, correlation, {grid_x, 1, 1}, {128, 1, 1}, 96, 0, 49152,
                                         gpu_ns, gpu_ns + duration_ns});
    gpu_ns += duration_ns + 1'000;
    cpu_ns += 5'000;
    ++correlation;
  };
  // A copy before any range: outside every stage.
  t.api_calls.push_back(tf::ApiCallRecord{correlation, kThread, 1'500'000, 1'520'000});
  t.memops.push_back(tf::MemOpRecord{tf::MemOpKind::kMemcpy, 1, 0, 1, 7, correlation++, 65536, 1'510'000, 1'516'000});
  const std::uint64_t prefill_start = cpu_ns - 1'000;
  for (int layer = 0; layer < 2; ++layer) {
    launch(gemm, 264, 40'000);
    launch(flash, 128, 25'000);
    launch(reduce, 4, 3'000);
  }
  t.ranges.push_back(tf::RangeRecord{0, strings.intern("prefill"), tf::RangeKind::kPushPop, kThread, prefill_start, cpu_ns});
  cpu_ns += 10'000;
  const std::uint64_t decode_start = cpu_ns - 1'000;
  const std::uint32_t llm = strings.intern("llm");
  for (int step = 0; step < 2; ++step) {
    const std::uint64_t step_start = cpu_ns - 500;
    launch(gemm, 66, 9'000);
    launch(reduce, 4, 2'500);
    t.api_calls.push_back(tf::ApiCallRecord{correlation, kThread, cpu_ns, cpu_ns + 3'000});
    t.memops.push_back(tf::MemOpRecord{tf::MemOpKind::kMemset, 0, 0, 1, 7, correlation++, 4096, gpu_ns, gpu_ns + 1'200});
    cpu_ns += 4'000;
    t.ranges.push_back(tf::RangeRecord{llm, strings.intern("step"), tf::RangeKind::kStartEnd, kThread, step_start, cpu_ns});
  }
  t.ranges.push_back(tf::RangeRecord{0, strings.intern("decode"), tf::RangeKind::kPushPop, kThread, decode_start, cpu_ns});
  // The program exits inside "teardown": the range stays open.
  t.ranges.push_back(tf::RangeRecord{0, strings.intern("teardown"), tf::RangeKind::kPushPop, kThread, cpu_ns + 1'000,
                                     tf::kOpenEnd});
  cpu_ns += 2'000;
  t.api_calls.push_back(tf::ApiCallRecord{correlation, kThread, cpu_ns, cpu_ns + 20'000});
  t.memops.push_back(tf::MemOpRecord{tf::MemOpKind::kMemcpy, 2, 0, 1, 7, correlation++, 256, gpu_ns + 2'000, gpu_ns + 3'000});
  return t;
}

}  // namespace kernlens::test
