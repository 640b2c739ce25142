#include "kernlens/ingest/nsys/sqlite.h"

#include <algorithm>
#include <array>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "kernlens/common/chunk_reader.h"
#include "kernlens/common/file.h"
#include "kernlens/ingest/nsys/sqlite_calls.h"
#include "kernlens/ingest/nsys/sqlite_devices.h"
#include "kernlens/ingest/nsys/sqlite_nvtx.h"
#include "kernlens/ingest/nsys/sqlite_schema.h"
#include "kernlens/ingest/timeline/memcpy_kinds.h"
#include "kernlens/ingest/timeline/nvtx_projection.h"

namespace kernlens::ingest {
namespace {

using namespace nsys;

// Columns every GPU activity table has, first in every SELECT of one.
enum OpColumn : int {
  kStart,
  kEnd,
  kDeviceId,
  kContextId,
  kStreamId,
  kCorrelationId,
  kGlobalPid,
  kExtra
};
constexpr std::array<Column, kExtra> kOpColumns = {{{"start", true},
                                                    {"end", true},
                                                    {"deviceId"},
                                                    {"contextId"},
                                                    {"streamId"},
                                                    {"correlationId"},
                                                    {"globalPid"}}};

enum KernelColumn : int {
  kDemangled = kExtra,
  kShortName,
  kMangled,
  kGridX,
  kGridY,
  kGridZ,
  kBlockX,
  kBlockY,
  kBlockZ,
  kRegisters,
  kStaticShared,
  kDynamicShared,
  kKernelColumnCount
};
constexpr std::array<std::string_view, kKernelColumnCount - int{kExtra}> kKernelExtraColumns = {
    "demangledName",
    "shortName",
    "mangledName",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "registersPerThread",
    "staticSharedMemory",
    "dynamicSharedMemory"};

std::vector<Column> op_columns(std::span<const std::string_view> extra) {
  std::vector<Column> cols(kOpColumns.begin(), kOpColumns.end());
  for (auto name : extra) cols.push_back(Column{name});
  return cols;
}

// A GPU operation (index into profile.launches) or an API call (index into the rows read),

class NsysReader {
 public:
  NsysReader(SqliteDb db, DbSource source, std::uint64_t file_bytes, ReadContext& ctx)
      : db_(std::move(db)),
        source_(std::move(source)),
        file_bytes_(file_bytes),
        ctx_(ctx),
        schema_(db_, ctx) {}

  Status read() {
    if (auto s = schema_.load(); !s) return s;
    if (auto s = check_is_nsys_export(); !s) return s;
    if (auto s = strings_.open(schema_); !s) return s;
    reserve();
    auto api_calls = start_reading_api_rows(schema_, source_, file_bytes_);
    for (auto step :
         {&NsysReader::read_gpus, &NsysReader::read_process_names, &NsysReader::read_kernels,
          &NsysReader::read_memcpys, &NsysReader::read_memsets, &NsysReader::read_nvtx}) {
      if (auto s = (this->*step)(); !s) return s;
    }
    if (auto s = match_api_calls(api_calls.get()); !s) return s;
    attribute_to_stages();
    fill_devices();
    if (ctx_.progress) ctx_.progress(file_bytes_);
    return ok_status();
  }

 private:
  Status check_is_nsys_export() {
    bool nsys = std::any_of(kMetadataTables.begin(), kMetadataTables.end(),
                            [&](auto t) { return schema_.has(t); }) ||
                schema_.has(kStrings) || schema_.has(kNvtx) ||
                schema_.has_any_table_starting("CUPTI_ACTIVITY_KIND_");
    if (!nsys) {
      return ctx_.error(0,
                        "an SQLite database, but not an Nsight Systems export: it has none of the "
                        "tables `nsys export --type sqlite` writes (META_DATA_EXPORT, StringIds, "
                        "CUPTI_ACTIVITY_KIND_*)");
    }
    if (!schema_.has(kKernels)) {
      return ctx_.error(0, "no table " + std::string(kKernels) + schema_.version_note() +
                               ": the report holds no CUDA kernels (nsys creates a table only for "
                               "what it recorded; profile with --trace=cuda)");
    }
    if (!schema_.has(kStrings)) {
      return ctx_.error(
          0, "no table StringIds" + schema_.version_note() + ": kernel names cannot be read");
    }
    return ok_status();
  }

  void reserve() {
    std::size_t ops = schema_.row_estimate(kKernels, file_bytes_) +
                      schema_.row_estimate(kMemcpy, file_bytes_) +
                      schema_.row_estimate(kMemset, file_bytes_);
    reserve_huge(ctx_.profile.launches, ctx_.profile.launches.size() + ops);
    reserve_huge(ops_, ops);
  }

  Error row_error(std::string_view table, std::uint64_t row, const std::string& what) const {
    return ctx_.error(0, std::string(table) + " row " + std::to_string(row) + ": " + what);
  }

  // ---- devices and processes --------------------------------------------------------------

  Status read_gpus() {
    auto gpus = read_nsys_gpus(schema_);
    if (!gpus) return gpus.error();
    gpus_ = std::move(gpus).value();
    return ok_status();
  }

  // PROCESSES (schema 2.x): process names by globalPid.
  Status read_process_names() {
    static constexpr std::array kColumns = {Column{"globalPid", true}, Column{"name"}};
    if (!schema_.has("PROCESSES")) return ok_status();
    auto stmt = schema_.select("PROCESSES", kColumns);
    if (!stmt) return stmt.error();
    while (stmt->step()) process_names_[stmt->int64(0)] = std::string(stmt->text(1));
    return schema_.finished(*stmt, "PROCESSES");
  }

  std::uint32_t process_index(std::int64_t global_pid) {
    auto [it, is_new] = process_index_.try_emplace(global_pid, 0);
    if (is_new) {
      auto name = process_names_.find(global_pid);
      it->second = ctx_.profile.intern_process(model::ProcessInfo{
          "", pid_of(global_pid), name == process_names_.end() ? std::string() : name->second});
    }
    return it->second;
  }

  void fill_devices() {
    for (std::int32_t ordinal : devices_used_) {
      auto it = gpus_.find(ordinal);
      if (it == gpus_.end()) continue;
      if (auto conflict = ctx_.profile.device(ordinal).fill_from(it->second)) ctx_.warn(0, *conflict + "; ranks that disagree on the GPU are not one GPU: peaks and MFU use the earlier input's");
    }
  }

  // ---- GPU activity -----------------------------------------------------------------------

  // The columns every GPU activity row has: time, where it ran, and who launched it.
  Status read_op(const SqliteStatement& stmt, std::string_view table, std::uint64_t row,
                 model::Launch& l) {
    auto start = stmt.opt_int64(kStart), end = stmt.opt_int64(kEnd);
    if (!start || !end) return row_error(table, row, "no start or end time");
    // SQLite reads text such as 'abc' as 0: only integers are times.
    for (int column : {kStart, kEnd}) {
      if (stmt.type(column) != SqliteStatement::Type::kInteger) {
        return row_error(table, row, std::string(column == kStart ? "start" : "end") + " is '" +
                                         std::string(stmt.text(column)) + "', not an integer time in ns");
      }
    }
    if (!plausible_time(*start) || !plausible_time(*end)) {
      return row_error(
          table, row,
          "time out of range (" + std::to_string(*start) + " to " + std::to_string(*end) + " ns)");
    }
    if (*end < *start) {
      return row_error(table, row,
                       "ends (" + std::to_string(*end) + " ns) before it starts (" +
                           std::to_string(*start) + " ns)");
    }
    l.start_ns = *start;
    l.duration_ns = static_cast<double>(*end - *start);
    l.input = ctx_.input_index;
    l.context_id = stmt.opt_int64(kContextId).value_or(model::kUnknown);
    l.stream_id = stmt.opt_int64(kStreamId).value_or(model::kUnknown);
    if (auto device = stmt.opt_int64(kDeviceId)) {
      if (*device < 0 || *device > std::numeric_limits<std::int32_t>::max()) {
        return row_error(table, row,
                         "deviceId " + std::to_string(*device) + " is not a device ordinal");
      }
      l.device_ordinal = static_cast<std::int32_t>(*device);
      if (std::find(devices_used_.begin(), devices_used_.end(), l.device_ordinal) ==
          devices_used_.end()) {
        devices_used_.push_back(l.device_ordinal);
      }
    }
    auto correlation = stmt.opt_int64(kCorrelationId);
    auto global_pid = stmt.opt_int64(kGlobalPid);
    if (correlation) l.id = *correlation;
    if (global_pid) l.process = process_index(*global_pid);
    trace_end_ = std::max(trace_end_, *end);
    if (auto key = correlation && global_pid ? calls_.key(*global_pid, *correlation) : std::nullopt) {
      ops_.push_back(Keyed{*key, static_cast<std::uint32_t>(ctx_.profile.launches.size())});
    }
    return ok_status();
  }

  Status read_kernels() {
    if (!std::any_of(kKernelExtraColumns.begin(), kKernelExtraColumns.begin() + 3,
                     [&](auto c) { return schema_.has_column(kKernels, c); })) {
      return ctx_.error(0, "table " + std::string(kKernels) +
                               " has none of the name columns "
                               "demangledName, shortName, mangledName" +
                               schema_.version_note());
    }
    auto cols = op_columns(kKernelExtraColumns);
    auto stmt = schema_.select(kKernels, cols);
    if (!stmt) return stmt.error();
    std::uint64_t row = 0;
    while (stmt->step()) {
      model::Launch l;
      if (auto s = read_op(*stmt, kKernels, ++row, l); !s) return s;
      if (auto s = read_kernel_fields(*stmt, row, l); !s) return s;
      ctx_.profile.launches.push_back(std::move(l));
    }
    if (auto s = schema_.finished(*stmt, kKernels); !s) return s;
    if (row == 0) return ctx_.error(0, "table " + std::string(kKernels) + " holds no kernels");
    return ok_status();
  }

  Status read_kernel_fields(const SqliteStatement& stmt, std::uint64_t row, model::Launch& l) {
    auto name = kernel_name(stmt);
    if (!name) return row_error(kKernels, row, "no kernel name in StringIds for its name ids");
    l.name = *name;
    std::string bad;
    auto u32 = [&](int col, std::string_view what) -> std::uint32_t {
      auto v = stmt.opt_int64(col).value_or(0);
      if (v < 0 || v > std::numeric_limits<std::uint32_t>::max())
        bad = std::string(what) + " " + std::to_string(v);
      return static_cast<std::uint32_t>(
          std::clamp<std::int64_t>(v, 0, std::numeric_limits<std::uint32_t>::max()));
    };
    l.grid = {u32(kGridX, "gridX"), u32(kGridY, "gridY"), u32(kGridZ, "gridZ")};
    l.block = {u32(kBlockX, "blockX"), u32(kBlockY, "blockY"), u32(kBlockZ, "blockZ")};
    if (auto regs = stmt.opt_int64(kRegisters)) {
      if (*regs < 0 || *regs > std::numeric_limits<std::int32_t>::max())
        bad = "registersPerThread " + std::to_string(*regs);
      else
        l.registers_per_thread = static_cast<std::int32_t>(*regs);
    }
    for (auto [col, slot, what] :
         {std::tuple{kStaticShared, &l.static_shared_bytes, "staticSharedMemory"},
          std::tuple{kDynamicShared, &l.dynamic_shared_bytes, "dynamicSharedMemory"}}) {
      if (auto v = stmt.opt_int64(col)) {
        if (*v < 0)
          bad = std::string(what) + " " + std::to_string(*v);
        else
          *slot = *v;
      }
    }
    if (!bad.empty()) return row_error(kKernels, row, bad + " is out of range");
    return ok_status();
  }

  // The demangled name, else the short one, else the mangled one (as nsys's reports fall back).
  std::optional<model::NameId> kernel_name(const SqliteStatement& stmt) {
    auto demangled = stmt.opt_int64(kDemangled);
    if (demangled) {
      if (auto it = name_of_demangled_.find(*demangled); it != name_of_demangled_.end())
        return it->second;
    }
    for (int col : {kDemangled, kShortName, kMangled}) {
      auto id = stmt.opt_int64(col);
      if (!id) continue;
      const auto& text = strings_.get(*id);
      if (!text || text->empty()) continue;
      model::NameId name = ctx_.profile.names.intern(*text);
      if (demangled) name_of_demangled_.emplace(*demangled, name);
      return name;
    }
    return std::nullopt;
  }

  Status read_memcpys() {
    static constexpr std::array<std::string_view, 2> kExtraColumns = {"bytes", "copyKind"};
    if (!schema_.has(kMemcpy)) return ok_status();
    if (auto s = read_memcpy_labels(); !s) return s;
    return read_memory_ops(kMemcpy, kExtraColumns, model::LaunchKind::kMemcpy);
  }

  Status read_memsets() {
    static constexpr std::array<std::string_view, 1> kExtraColumns = {"bytes"};
    if (!schema_.has(kMemset)) return ok_status();
    return read_memory_ops(kMemset, kExtraColumns, model::LaunchKind::kMemset);
  }

  Status read_memcpy_labels() {
    static constexpr std::array kColumns = {Column{"id", true}, Column{"label", true}};
    for (std::size_t i = 0; i < kMemcpyKindLabels.size(); ++i) {
      memcpy_labels_[static_cast<std::int64_t>(i)] = std::string(kMemcpyKindLabels[i]);
    }
    if (!schema_.has("ENUM_CUDA_MEMCPY_OPER")) return ok_status();
    auto stmt = schema_.select("ENUM_CUDA_MEMCPY_OPER", kColumns);
    if (!stmt) return stmt.error();
    memcpy_labels_.clear();
    while (stmt->step()) memcpy_labels_[stmt->int64(0)] = std::string(stmt->text(1));
    return schema_.finished(*stmt, "ENUM_CUDA_MEMCPY_OPER");
  }

  // nsys's names for memory operations: "[CUDA memcpy Host-to-Device]", "[CUDA memset]".
  model::NameId memory_op_name(model::LaunchKind kind, std::optional<std::int64_t> copy_kind) {
    if (kind == model::LaunchKind::kMemset) return ctx_.profile.names.intern(kMemsetLaunchName);
    auto it = copy_kind ? memcpy_labels_.find(*copy_kind) : memcpy_labels_.end();
    std::string label = it != memcpy_labels_.end() ? it->second
                        : copy_kind                ? "kind " + std::to_string(*copy_kind)
                                                   : "Unknown";
    return ctx_.profile.names.intern(memcpy_launch_name(label));
  }

  Status read_memory_ops(std::string_view table, std::span<const std::string_view> extra,
                         model::LaunchKind kind) {
    auto cols = op_columns(extra);
    auto stmt = schema_.select(table, cols);
    if (!stmt) return stmt.error();
    std::uint64_t row = 0;
    while (stmt->step()) {
      model::Launch l;
      l.kind = kind;
      if (auto s = read_op(*stmt, table, ++row, l); !s) return s;
      if (auto bytes = stmt->opt_int64(kExtra); bytes && *bytes >= 0) l.bytes = *bytes;
      l.name = memory_op_name(
          kind, kind == model::LaunchKind::kMemcpy ? stmt->opt_int64(kExtra + 1) : std::nullopt);
      ctx_.profile.launches.push_back(std::move(l));
    }
    return schema_.finished(*stmt, table);
  }

  // ---- CUDA API calls and NVTX ranges -------------------------------------------------------

  Status match_api_calls(const ApiRows& read) {
    if (read.error)
      return schema_.unreadable("table " + std::string(kRuntime) + ": " + read.error->message);
    for (const ApiRow& r : read.rows) trace_end_ = std::max(trace_end_, r.end);
    calls_.match(read.rows, ops_);
    return ok_status();
  }

  Status read_nvtx() {
    if (auto s = nvtx_.read(); !s) return s;
    trace_end_ = std::max(trace_end_, nvtx_.latest_ns());
    return ok_status();
  }

  void attribute_to_stages() {
    nvtx_.close(trace_end_);
    const auto& call_of_op = calls_.call_of_op();
    std::vector<KernelSpan> kernels;
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const model::Launch& l = ctx_.profile.launches[ops_[i].index];
      if (call_of_op[i] == CallMatcher::kNoCall || l.kind != model::LaunchKind::kKernel) continue;
      kernels.push_back(KernelSpan{call_of_op[i], *l.start_ns,
                                   *l.start_ns + static_cast<std::int64_t>(*l.duration_ns)});
    }
    std::vector<model::StageId> stage_of_call =
        project_nvtx(calls_.calls(), nvtx_.ranges(), kernels, ctx_.profile);
    std::size_t unmatched = 0;
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      model::Launch& l = ctx_.profile.launches[ops_[i].index];
      if (call_of_op[i] == CallMatcher::kNoCall) {
        unmatched += l.kind == model::LaunchKind::kKernel;
        continue;
      }
      l.stage = stage_of_call[call_of_op[i]];
      l.thread_id = tid_of(calls_.calls()[call_of_op[i]].thread);
    }
    warn_about_ranges(unmatched);
  }

  void warn_about_ranges(std::size_t unmatched_kernels) {
    nvtx_.warn(ctx_, trace_end_);
    if (nvtx_.ranges().empty()) return;
    if (!schema_.has(kRuntime)) {
      ctx_.warn(
          0, "no table " + std::string(kRuntime) + ": kernels cannot be attributed to NVTX ranges");
    } else if (unmatched_kernels > 0) {
      ctx_.warn(0, std::to_string(unmatched_kernels) +
                       " kernels have no CUDA API call with their "
                       "correlation id in " +
                       std::string(kRuntime) + ": they count outside every NVTX range");
    }
  }

  SqliteDb db_;
  DbSource source_;
  std::uint64_t file_bytes_;
  ReadContext& ctx_;
  Schema schema_;
  Strings strings_;
  NvtxRanges nvtx_{schema_, strings_};
  CallMatcher calls_;
  std::map<std::int64_t, model::Device> gpus_;  // TARGET_INFO_GPU id -> device
  std::vector<std::int32_t> devices_used_;
  std::unordered_map<std::int64_t, std::string> process_names_;  // globalPid -> name
  std::unordered_map<std::int64_t, std::uint32_t>
      process_index_;  // globalPid -> Profile::processes
  std::unordered_map<std::int64_t, model::NameId> name_of_demangled_;
  std::map<std::int64_t, std::string> memcpy_labels_;
  std::vector<Keyed> ops_;
  std::int64_t trace_end_ = std::numeric_limits<std::int64_t>::min();
};

Status read_database(DbSource source, std::uint64_t file_bytes, ReadContext& ctx) {
  auto db = source.open();
  if (!db) return ctx.error(0, "cannot open the SQLite database: " + db.error().message);
  return NsysReader(std::move(*db), std::move(source), file_bytes, ctx).read();
}

Error truncated(std::uint64_t declared, std::uint64_t size, ReadContext& ctx) {
  return ctx.error(0, "the SQLite file is truncated: its header declares " +
                          std::to_string(declared) + " bytes, the file has " +
                          std::to_string(size));
}

}  // namespace

Status read_nsys_sqlite(std::string_view bytes, ReadContext& ctx) {
  if (auto declared = sqlite_declared_size_beyond(bytes, bytes.size())) {
    return truncated(*declared, bytes.size(), ctx);
  }
  return read_database(DbSource{bytes, {}}, bytes.size(), ctx);
}

Status read_nsys_sqlite_file(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx) {
  auto head = read_file_head(path, 100);
  if (!head) return head.error();
  if (auto declared = sqlite_declared_size_beyond(*head, file_bytes))
    return truncated(*declared, file_bytes, ctx);
  return read_database(DbSource{{}, path}, file_bytes, ctx);
}

}  // namespace kernlens::ingest
