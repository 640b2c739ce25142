#include "kernlens/ingest/nsys/sqlite_devices.h"

#include <array>

namespace kernlens::ingest::nsys {
namespace {

Status read_gpu_info(Schema& schema, std::map<std::int64_t, model::Device>& gpus) {
  static constexpr std::array kColumns = {
      Column{"id", true},      Column{"name"},          Column{"computeMajor"},
      Column{"computeMinor"},  Column{"smCount"},       Column{"clockRate"},
      Column{"totalMemory"},   Column{"l2CacheSize"},   Column{"maxShmemPerSm"},
      Column{"maxWarpsPerSm"}, Column{"threadsPerWarp"}};
  if (!schema.has("TARGET_INFO_GPU")) return ok_status();
  auto stmt = schema.select("TARGET_INFO_GPU", kColumns);
  if (!stmt) return stmt.error();
  auto positive = [&](int col) -> std::optional<std::int64_t> {
    auto v = stmt->opt_int64(col);
    return v && *v > 0 ? v : std::nullopt;
  };
  while (stmt->step()) {
    model::Device& d = gpus[stmt->int64(0)];
    d.name = std::string(stmt->text(1));
    if (auto major = stmt->opt_int64(2), minor = stmt->opt_int64(3); major && minor) {
      d.cc = std::to_string(*major) + "." + std::to_string(*minor);
    }
    d.sm_count = positive(4);
    if (auto hz = positive(5)) d.sm_clock_max_hz = static_cast<double>(*hz);
    d.memory_total_bytes = positive(6);
    d.l2_cache_bytes = positive(7);
    d.max_shared_memory_per_sm_bytes = positive(8);
    if (auto warps = positive(9), warp = positive(10); warps && warp)
      d.max_threads_per_sm = *warps * *warp;
  }
  return schema.finished(*stmt, "TARGET_INFO_GPU");
}

// TARGET_INFO_CUDA_DEVICE (schema 3.16.4 and later): the SMs a process could use.
Status read_cuda_devices(Schema& schema, std::map<std::int64_t, model::Device>& gpus) {
  static constexpr std::array kColumns = {Column{"gpuId"}, Column{"numMultiprocessors"}};
  if (!schema.has("TARGET_INFO_CUDA_DEVICE")) return ok_status();
  auto stmt = schema.select("TARGET_INFO_CUDA_DEVICE", kColumns);
  if (!stmt) return stmt.error();
  while (stmt->step()) {
    auto gpu = stmt->opt_int64(0);
    auto sms = stmt->opt_int64(1);
    if (!gpu || !sms || *sms <= 0) continue;
    model::Device& d = gpus[*gpu];
    if (!d.sm_count) d.sm_count = sms;
  }
  return schema.finished(*stmt, "TARGET_INFO_CUDA_DEVICE");
}

}  // namespace

Result<std::map<std::int64_t, model::Device>> read_nsys_gpus(Schema& schema) {
  std::map<std::int64_t, model::Device> gpus;
  if (auto s = read_gpu_info(schema, gpus); !s) return s.error();
  if (auto s = read_cuda_devices(schema, gpus); !s) return s.error();
  return gpus;
}

}  // namespace kernlens::ingest::nsys
