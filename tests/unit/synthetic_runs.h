// Made-up run records of a realistic shape, for store tests and the ingest benchmark: kernels
// drawn from a pool of families (so that popularity has something to count), figures on the
// hot ones, two stages.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "kernlens/model/run_record.h"

namespace kernlens::test {

inline model::RunRecord synthetic_run(std::uint64_t seed, std::size_t kernel_count) {
  static constexpr const char* kModels[] = {"llama", "qwen", "gpt2", "mistral", "phi"};
  static constexpr const char* kOps[] = {"gemm", "attention", "elementwise", "norm", "reduction", "copy"};
  static constexpr const char* kBottlenecks[] = {"compute", "memory", "latency", "launch"};
  model::RunRecord run;
  run.meta.run_key = fmt::format("synthetic-{:08x}", seed);
  run.meta.source_path = "synthetic";
  run.meta.model = kModels[seed % 5];
  run.meta.dtype = "bf16";
  run.meta.batch = static_cast<std::int64_t>(1 << (seed % 4));
  run.meta.tags = {{"model", run.meta.model}, {"seed", std::to_string(seed)}};
  run.device = model::RunDevice{"NVIDIA H100 80GB HBM3", "9.0", 132, 85520809984, 52428800};
  double total_ns = 0;
  for (std::size_t i = 0; i < kernel_count; ++i) {
    model::RunKernel k;
    std::size_t family = (i * 7 + seed) % 600;  // 600 families: runs share most of them
    k.base_name = fmt::format("family_{}_kernel", family);
    k.name = fmt::format("void {}<{}, {}>(float*, int)", k.base_name, i % 3, seed % 11);
    k.library = family % 2 ? "pytorch" : "cublas";
    k.op_class = kOps[family % 6];
    k.grid = fmt::format("{},1,1", 64 + family);
    k.block = "256,1,1";
    k.launches = 1 + i % 40;
    k.total_ns = 1000.0 * static_cast<double>(1 + (i * 31 + seed) % 997);
    k.mean_ns = *k.total_ns / static_cast<double>(k.launches);
    if (i < 40) {
      k.sm_pct = 10.0 + static_cast<double>(i % 80);
      k.dram_pct = 5.0 + static_cast<double>((i * 3) % 90);
      k.l2_hit_pct = static_cast<double>((i * 13) % 100);
      k.achieved_occupancy_pct = 10.0 + static_cast<double>(i % 50);
      k.theoretical_occupancy_pct = 50.0 + static_cast<double>(i % 50);
      k.occupancy_limiter = "registers";
    }
    k.bottleneck = kBottlenecks[i % 4];
    total_ns += *k.total_ns;
    run.kernels.push_back(std::move(k));
  }
  for (auto& k : run.kernels) k.share = *k.total_ns / total_ns;
  run.kernel_time_ns = total_ns;
  run.launches = kernel_count * 20;
  model::RunStage prefill;
  prefill.name = "prefill";
  prefill.launches = run.launches / 2;
  prefill.kernel_time_ns = total_ns / 2;
  prefill.wall_ns = total_ns;
  prefill.busy_fraction = 0.5 + static_cast<double>(seed % 50) / 100;
  run.stages.push_back(prefill);
  model::RunStage decode = prefill;
  decode.name = "decode";
  decode.busy_fraction = 0.2;
  run.stages.push_back(decode);
  return run;
}

}  // namespace kernlens::test
