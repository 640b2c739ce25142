#include "kernlens/ingest/nsys_sqlite.h"

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
#include "kernlens/common/memory.h"
#include "kernlens/ingest/cuda_memcpy_kinds.h"
#include "kernlens/ingest/nvtx_projection.h"
#include "kernlens/ingest/sqlite_db.h"

namespace kernlens::ingest {
namespace {

constexpr std::string_view kKernels = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr std::string_view kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
constexpr std::string_view kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
constexpr std::string_view kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr std::string_view kNvtx = "NVTX_EVENTS";
constexpr std::string_view kStrings = "StringIds";
// The export's own description: EXPORT_META_DATA in schema 2.x, META_DATA_EXPORT in 3.x.
constexpr std::array<std::string_view, 2> kMetadataTables = {"META_DATA_EXPORT",
                                                             "EXPORT_META_DATA"};

// Timestamps are ns since the session start. Far beyond a century they are damage, and
// rejecting them keeps every later difference and sum of two timestamps within 64 bits.
bool plausible_time(std::int64_t ns) {
  return ns > -(std::int64_t{1} << 61) && ns < (std::int64_t{1} << 61);
}

// Serialized global ids (nsys's report scripts decode them so): the process id in bits 24-47,
// the thread id in bits 0-23. A globalPid is the globalTid of its process with no thread bits.
std::int64_t process_of(std::int64_t global_id) {
  return global_id & ~std::int64_t{0xFFFFFF};
}
std::int64_t pid_of(std::int64_t global_id) {
  return (global_id >> 24) & 0xFFFFFF;
}
std::int64_t tid_of(std::int64_t global_id) {
  return global_id & 0xFFFFFF;
}

struct Column {
  std::string_view name;
  bool required = false;
};

// Where the database lies, so that another thread can open a connection of its own.
struct DbSource {
  std::string_view bytes;  // the database in memory, unless
  std::string path;        // it is read from this file

  Result<SqliteDb> open() const {
    return path.empty() ? SqliteDb::open_bytes(bytes) : SqliteDb::open_file(path);
  }
};

// Reserves before the first touch, with huge pages: each 4 KiB page fault costs about a
// microsecond on virtual machines, a quarter of the time for a million launches.
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  if (n <= v.capacity()) return;
  v.reserve(n);
  advise_huge_pages(v.data() + v.size(), (v.capacity() - v.size()) * sizeof(T));
}

// The export's tables, and SELECTs over their columns by name.
class Schema {
 public:
  Schema(const SqliteDb& db, ReadContext& ctx) : db_(db), ctx_(ctx) {}

  // Errors: a file SQLite cannot read (not a database, damaged, truncated).
  Status load() {
    auto names = db_.table_names();
    if (!names) return unreadable(names.error().message);
    tables_ = std::move(*names);
    read_version();
    return ok_status();
  }

  bool has(std::string_view table) const {
    return std::find(tables_.begin(), tables_.end(), table) != tables_.end();
  }
  bool has_any_table_starting(std::string_view prefix) const {
    return std::any_of(tables_.begin(), tables_.end(), [&](const std::string& t) {
      return std::string_view(t).substr(0, prefix.size()) == prefix;
    });
  }
  bool has_column(std::string_view table, std::string_view column) {
    const auto* cols = columns(table);
    return cols && std::find(cols->begin(), cols->end(), column) != cols->end();
  }

  // SELECT of `columns` in their order; an absent optional column reads as NULL.
  Result<SqliteStatement> select(std::string_view table, std::span<const Column> columns,
                                 std::string_view where = {}) {
    auto sql = select_sql(table, columns, where);
    if (!sql) return sql.error();
    auto stmt = db_.prepare(*sql);
    if (!stmt) return unreadable("table " + std::string(table) + ": " + stmt.error().message);
    return stmt;
  }

  // The SQL of that SELECT, to run on another connection.
  Result<std::string> select_sql(std::string_view table, std::span<const Column> columns,
                                 std::string_view where = {}) {
    std::string sql = "SELECT ";
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (i > 0) sql += ", ";
      if (has_column(table, columns[i].name)) {
        sql += sql_quote(columns[i].name);
      } else if (columns[i].required) {
        return ctx_.error(0, "table " + std::string(table) + " has no column '" +
                                 std::string(columns[i].name) + "'" + version_note());
      } else {
        sql += "NULL";
      }
    }
    sql += " FROM " + sql_quote(table);
    if (!where.empty()) sql += " WHERE " + std::string(where);
    return sql;
  }

  // An error for a query that failed on the file's content.
  Error unreadable(const std::string& what) const {
    return ctx_.error(0, "cannot read the SQLite database (" + what +
                             "): the file is damaged, truncated or not an SQLite database");
  }
  // About how many rows `table` has, cheaply (nsys numbers rows densely), for reserving
  // memory: growing a vector of a million launches step by step costs more than reading them.
  // Bounded by what a file of `file_bytes` can hold, whatever its rowids claim.
  std::size_t row_estimate(std::string_view table, std::uint64_t file_bytes) const {
    constexpr std::uint64_t kMinRowBytes = 16;
    if (!has(table)) return 0;
    auto stmt = db_.prepare("SELECT max(rowid) FROM " + sql_quote(table));
    if (!stmt || !stmt->step() || stmt->int64(0) <= 0) return 0;
    return static_cast<std::size_t>(
        std::min(static_cast<std::uint64_t>(stmt->int64(0)), file_bytes / kMinRowBytes));
  }

  std::string version_note() const {
    return version_.empty() ? std::string() : " (export schema " + version_ + ")";
  }

 private:
  const std::vector<std::string>* columns(std::string_view table) {
    std::string key(table);
    auto it = columns_.find(key);
    if (it == columns_.end()) {
      auto cols = db_.columns(table);
      it = columns_.emplace(key, cols ? std::move(*cols) : std::vector<std::string>{}).first;
    }
    return &it->second;
  }

  void read_version() {
    for (auto table : kMetadataTables) {
      if (!has(table)) continue;
      auto stmt = db_.prepare("SELECT value FROM " + sql_quote(table) +
                              " WHERE name = 'EXPORT_SCHEMA_VERSION'");
      if (stmt && stmt->step()) version_ = std::string(stmt->text(0));
      return;
    }
  }

  const SqliteDb& db_;
  ReadContext& ctx_;
  std::vector<std::string> tables_;
  std::map<std::string, std::vector<std::string>> columns_;
  std::string version_;
};

// StringIds values by id, looked up on demand: an export holds many strings (call stacks,
// file names) and only a few are kernel or range names.
class Strings {
 public:
  Status open(Schema& schema) {
    static constexpr std::array kColumns = {Column{"id", true}, Column{"value", true}};
    auto stmt = schema.select(kStrings, kColumns, "id = ?");
    if (!stmt) return stmt.error();
    lookup_ = std::move(*stmt);
    return ok_status();
  }

  // The string with this id; nullopt when there is none.
  const std::optional<std::string>& get(std::int64_t id) {
    auto [it, is_new] = cache_.try_emplace(id);
    if (is_new) {
      lookup_.reset();
      lookup_.bind(1, id);
      if (lookup_.step()) it->second = std::string(lookup_.text(1));
    }
    return it->second;
  }

 private:
  SqliteStatement lookup_;
  std::unordered_map<std::int64_t, std::optional<std::string>> cache_;
};

// NVTX event types. ENUM_NSYS_EVENT_TYPE names them in current exports; older exports lack
// the table and use the numbers that NVIDIA's own report scripts use (nvtx_gpu_proj_trace.py,
// Nsight Systems 2025.3): 59 push/pop, 60 start/end, 70 and 71 the same imported from NVTXT
// files, 75 domain creation.
struct NvtxTypes {
  std::vector<std::int64_t> push_pop, start_end;
  std::optional<std::int64_t> domain_create;
};

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
// with its call key: (process, correlation id) as one number, to sort and merge on.
struct Keyed {
  std::uint64_t key;
  std::uint32_t index;
};

// Sorts by key, unless already sorted: both tables usually come in correlation-id order.
void sort_by_key(std::vector<Keyed>& v) {
  auto by_key = [](const Keyed& a, const Keyed& b) { return a.key < b.key; };
  if (!std::is_sorted(v.begin(), v.end(), by_key)) std::sort(v.begin(), v.end(), by_key);
}

// A CUDA API call as the export records it.
struct ApiRow {
  std::int64_t global_tid, correlation, start, end;
};

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
    auto api_calls = start_reading_api_calls();
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
    if (auto s = read_gpu_info(); !s) return s;
    return read_cuda_devices();
  }

  Status read_gpu_info() {
    static constexpr std::array kColumns = {
        Column{"id", true},      Column{"name"},          Column{"computeMajor"},
        Column{"computeMinor"},  Column{"smCount"},       Column{"clockRate"},
        Column{"totalMemory"},   Column{"l2CacheSize"},   Column{"maxShmemPerSm"},
        Column{"maxWarpsPerSm"}, Column{"threadsPerWarp"}};
    if (!schema_.has("TARGET_INFO_GPU")) return ok_status();
    auto stmt = schema_.select("TARGET_INFO_GPU", kColumns);
    if (!stmt) return stmt.error();
    auto positive = [&](int col) -> std::optional<std::int64_t> {
      auto v = stmt->opt_int64(col);
      return v && *v > 0 ? v : std::nullopt;
    };
    while (stmt->step()) {
      model::Device& d = gpus_[stmt->int64(0)];
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
    return finished(*stmt, "TARGET_INFO_GPU");
  }

  // TARGET_INFO_CUDA_DEVICE (schema 3.16.4 and later): the SMs a process could use.
  Status read_cuda_devices() {
    static constexpr std::array kColumns = {Column{"gpuId"}, Column{"numMultiprocessors"}};
    if (!schema_.has("TARGET_INFO_CUDA_DEVICE")) return ok_status();
    auto stmt = schema_.select("TARGET_INFO_CUDA_DEVICE", kColumns);
    if (!stmt) return stmt.error();
    while (stmt->step()) {
      auto gpu = stmt->opt_int64(0);
      auto sms = stmt->opt_int64(1);
      if (!gpu || !sms || *sms <= 0) continue;
      model::Device& d = gpus_[*gpu];
      if (!d.sm_count) d.sm_count = sms;
    }
    return finished(*stmt, "TARGET_INFO_CUDA_DEVICE");
  }

  // PROCESSES (schema 2.x): process names by globalPid.
  Status read_process_names() {
    static constexpr std::array kColumns = {Column{"globalPid", true}, Column{"name"}};
    if (!schema_.has("PROCESSES")) return ok_status();
    auto stmt = schema_.select("PROCESSES", kColumns);
    if (!stmt) return stmt.error();
    while (stmt->step()) process_names_[stmt->int64(0)] = std::string(stmt->text(1));
    return finished(*stmt, "PROCESSES");
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
      if (it != gpus_.end()) ctx_.profile.device(ordinal).fill_from(it->second);
    }
  }

  // ---- GPU activity -----------------------------------------------------------------------

  Status finished(const SqliteStatement& stmt, std::string_view table) const {
    if (stmt.error())
      return schema_.unreadable("table " + std::string(table) + ": " + *stmt.error());
    return ok_status();
  }

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
    if (auto key = correlation && global_pid ? call_key(*global_pid, *correlation) : std::nullopt) {
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
    if (auto s = finished(*stmt, kKernels); !s) return s;
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
    return finished(*stmt, "ENUM_CUDA_MEMCPY_OPER");
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
    return finished(*stmt, table);
  }

  // ---- CUDA API calls and NVTX ranges -------------------------------------------------------

  // The CUDA API calls, read on a connection of their own and on another CPU when there is
  // one: the table is about as long as the kernel table and independent of it.
  std::future<Result<std::vector<ApiRow>>> start_reading_api_calls() {
    static constexpr std::array kColumns = {Column{"globalTid", true},
                                            Column{"correlationId", true}, Column{"start", true},
                                            Column{"end", true}};
    using Rows = Result<std::vector<ApiRow>>;
    if (!schema_.has(kRuntime))
      return std::async(std::launch::deferred, [] { return Rows(std::vector<ApiRow>{}); });
    auto sql = schema_.select_sql(kRuntime, kColumns);
    if (!sql) return std::async(std::launch::deferred, [e = sql.error()] { return Rows(e); });
    auto policy = ChunkReader::worth_reading_ahead() ? std::launch::async : std::launch::deferred;
    return std::async(policy,
                      [source = source_, sql = *sql,
                       rows = schema_.row_estimate(kRuntime, file_bytes_)]() -> Rows {
                        auto db = source.open();
                        if (!db) return db.error();
                        return read_api_rows(*db, sql, rows);
                      });
  }

  static Result<std::vector<ApiRow>> read_api_rows(const SqliteDb& db, const std::string& sql,
                                                   std::size_t estimate) {
    auto stmt = db.prepare(sql);
    if (!stmt) return stmt.error();
    std::vector<ApiRow> rows;
    reserve_huge(rows, estimate);
    while (stmt->step()) {
      if (stmt->is_null(0) || stmt->is_null(1)) continue;
      rows.push_back(ApiRow{stmt->int64(0), stmt->int64(1), stmt->int64(2), stmt->int64(3)});
    }
    if (stmt->error()) return make_error("", 0, *stmt->error());
    return rows;
  }

  // The API call of each GPU operation: same process and correlation id. A launch recorded
  // twice (cudaLaunchKernel wrapping cudaLaunchKernel_v7000 on the same thread) keeps the
  // inner call, the one any enclosing range must contain.
  Status match_api_calls(Result<std::vector<ApiRow>> rows) {
    if (!rows)
      return schema_.unreadable("table " + std::string(kRuntime) + ": " + rows.error().message);
    for (const ApiRow& r : *rows) trace_end_ = std::max(trace_end_, r.end);
    match_calls(*rows);
    return ok_status();
  }

  // Processes are few and CUPTI's correlation ids 32-bit: (process, correlation id) fits one
  // 64-bit key, and sorting keys is several times cheaper than sorting the rows.
  std::optional<std::uint64_t> call_key(std::int64_t global_id, std::int64_t correlation) {
    if (correlation < 0 || correlation > std::numeric_limits<std::uint32_t>::max())
      return std::nullopt;
    std::int64_t process = process_of(global_id);
    auto it = std::find(process_keys_.begin(), process_keys_.end(), process);
    if (it == process_keys_.end()) it = process_keys_.insert(it, process);
    return static_cast<std::uint64_t>(it - process_keys_.begin()) << 32 |
           static_cast<std::uint64_t>(correlation);
  }

  void match_calls(const std::vector<ApiRow>& rows) {
    std::vector<Keyed> by_key;
    by_key.reserve(rows.size());
    for (std::uint32_t i = 0; i < rows.size(); ++i) {
      if (auto key = call_key(rows[i].global_tid, rows[i].correlation))
        by_key.push_back(Keyed{*key, i});
    }
    sort_by_key(by_key);
    sort_by_key(ops_);
    call_of_op_.assign(ops_.size(), kNoCall);
    std::size_t r = 0;
    for (std::size_t i = 0; i < ops_.size();) {
      const std::uint64_t key = ops_[i].key;
      while (r < by_key.size() && by_key[r].key < key) ++r;
      bool found = r < by_key.size() && by_key[r].key == key;
      if (found) calls_.push_back(innermost_call(rows, by_key, r));
      // Every operation of one call (a CUDA graph launch starts many kernels) shares it.
      for (; i < ops_.size() && ops_[i].key == key; ++i) {
        if (found) call_of_op_[i] = static_cast<std::uint32_t>(calls_.size() - 1);
      }
    }
  }

  // Of the rows with the key at `at`, the last to start (then the first to end).
  static ApiCall innermost_call(const std::vector<ApiRow>& rows, const std::vector<Keyed>& by_key,
                                std::size_t at) {
    const ApiRow* best = &rows[by_key[at].index];
    for (std::size_t j = at + 1; j < by_key.size() && by_key[j].key == by_key[at].key; ++j) {
      const ApiRow& r = rows[by_key[j].index];
      if (r.start > best->start || (r.start == best->start && r.end < best->end)) best = &r;
    }
    return ApiCall{best->global_tid, best->start, best->end};
  }

  Result<NvtxTypes> nvtx_types() {
    NvtxTypes types;
    if (!schema_.has("ENUM_NSYS_EVENT_TYPE")) return documented_nvtx_types();
    static constexpr std::array kColumns = {Column{"id", true}, Column{"name", true}};
    auto stmt = schema_.select("ENUM_NSYS_EVENT_TYPE", kColumns);
    if (!stmt) return stmt.error();
    while (stmt->step()) {
      std::string_view name = stmt->text(1);
      std::int64_t id = stmt->int64(0);
      if (name == "NvtxPushPopRange" || name == "NvtxtPushPopRange") types.push_pop.push_back(id);
      if (name == "NvtxStartEndRange" || name == "NvtxtStartEndRange")
        types.start_end.push_back(id);
      if (name == "NvtxDomainCreate") types.domain_create = id;
    }
    if (auto s = finished(*stmt, "ENUM_NSYS_EVENT_TYPE"); !s) return s.error();
    // Before schema 3.18 lazy exports could write ENUM tables incompletely.
    if (types.push_pop.empty() && types.start_end.empty()) return documented_nvtx_types();
    return types;
  }

  static NvtxTypes documented_nvtx_types() { return NvtxTypes{{59, 70}, {60, 71}, 75}; }

  static std::string in_list(const std::vector<std::int64_t>& ids) {
    std::string list;
    for (auto id : ids) list += (list.empty() ? "" : ", ") + std::to_string(id);
    return list;
  }

  static constexpr std::array kNvtxColumns = {
      Column{"start", true}, Column{"end"},      Column{"eventType", true}, Column{"text"},
      Column{"textId"},      Column{"domainId"}, Column{"globalTid", true}, Column{"endGlobalTid"}};
  enum NvtxColumn : int { kNStart, kNEnd, kNType, kNText, kNTextId, kNDomain, kNTid, kNEndTid };

  // A range's or domain's text: the registered string (textId), else the explicit text.
  std::string nvtx_text(const SqliteStatement& stmt) {
    if (auto id = stmt.opt_int64(kNTextId)) {
      if (const auto& s = strings_.get(*id)) return *s;
    }
    return std::string(stmt.text(kNText));
  }

  Status read_domains(const NvtxTypes& types) {
    if (!types.domain_create) return ok_status();
    auto stmt =
        schema_.select(kNvtx, kNvtxColumns, "eventType = " + std::to_string(*types.domain_create));
    if (!stmt) return stmt.error();
    while (stmt->step()) {
      auto domain = stmt->opt_int64(kNDomain);
      if (!domain) continue;
      // Domain ids are per process; the first creation names it.
      domains_.try_emplace(std::pair{pid_of(stmt->int64(kNTid)), *domain}, nvtx_text(*stmt));
    }
    return finished(*stmt, kNvtx);
  }

  Status read_nvtx() {
    if (!schema_.has(kNvtx)) return ok_status();
    auto types = nvtx_types();
    if (!types) return types.error();
    if (types->push_pop.empty() && types->start_end.empty()) return ok_status();
    if (auto s = read_domains(*types); !s) return s;
    std::vector<std::int64_t> range_types = types->push_pop;
    range_types.insert(range_types.end(), types->start_end.begin(), types->start_end.end());
    auto stmt = schema_.select(kNvtx, kNvtxColumns, "eventType IN (" + in_list(range_types) + ")");
    if (!stmt) return stmt.error();
    while (stmt->step()) {
      if (!stmt->is_null(kNEndTid)) {  // ended on another thread: nsys does not project these
        ++ranges_across_threads_;
        continue;
      }
      std::int64_t tid = stmt->int64(kNTid);
      auto domain = stmt->opt_int64(kNDomain);
      auto d = domain ? domains_.find({pid_of(tid), *domain}) : domains_.end();
      bool push_pop = std::find(types->push_pop.begin(), types->push_pop.end(),
                                stmt->int64(kNType)) != types->push_pop.end();
      model::NvtxRange range{d == domains_.end() ? std::string() : d->second, nvtx_text(*stmt),
                             push_pop ? model::RangeKind::kPushPop : model::RangeKind::kStartEnd};
      std::int64_t start = stmt->int64(kNStart);
      auto end = stmt->opt_int64(kNEnd);
      trace_end_ = std::max({trace_end_, start, end.value_or(start)});
      if (!end) ++unended_[model::range_label(range)];
      ranges_.push_back(RangeInstance{tid, start, end.value_or(kOpenEnd), std::move(range)});
    }
    return finished(*stmt, kNvtx);
  }

  void attribute_to_stages() {
    for (auto& r : ranges_) {
      if (r.end_ns == kOpenEnd) r.end_ns = trace_end_;
    }
    std::vector<KernelSpan> kernels;
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const model::Launch& l = ctx_.profile.launches[ops_[i].index];
      if (call_of_op_[i] == kNoCall || l.kind != model::LaunchKind::kKernel) continue;
      kernels.push_back(KernelSpan{call_of_op_[i], *l.start_ns,
                                   *l.start_ns + static_cast<std::int64_t>(*l.duration_ns)});
    }
    std::vector<model::StageId> stage_of_call =
        project_nvtx(calls_, ranges_, kernels, ctx_.profile);
    std::size_t unmatched = 0;
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      model::Launch& l = ctx_.profile.launches[ops_[i].index];
      if (call_of_op_[i] == kNoCall) {
        unmatched += l.kind == model::LaunchKind::kKernel;
        continue;
      }
      l.stage = stage_of_call[call_of_op_[i]];
      l.thread_id = tid_of(calls_[call_of_op_[i]].thread);
    }
    warn_about_ranges(unmatched);
  }

  void warn_about_ranges(std::size_t unmatched_kernels) {
    for (const auto& [label, count] : unended_) {
      ctx_.warn(0, "NVTX range '" + label + "' never ends" +
                       (count > 1 ? " (" + std::to_string(count) + " instances)" : "") +
                       ": it is taken to end with the trace, at " + std::to_string(trace_end_) +
                       " ns");
    }
    if (ranges_across_threads_ > 0) {
      ctx_.warn(0, std::to_string(ranges_across_threads_) +
                       " NVTX ranges end on another thread than the one they start on; like Nsight "
                       "Systems' GPU projection, kernlens attributes no kernel to them");
    }
    if (ranges_.empty()) return;
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

  static constexpr std::uint32_t kNoCall = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::int64_t kOpenEnd = std::numeric_limits<std::int64_t>::max();

  SqliteDb db_;
  DbSource source_;
  std::uint64_t file_bytes_;
  ReadContext& ctx_;
  Schema schema_;
  Strings strings_;
  std::map<std::int64_t, model::Device> gpus_;  // TARGET_INFO_GPU id -> device
  std::vector<std::int32_t> devices_used_;
  std::unordered_map<std::int64_t, std::string> process_names_;  // globalPid -> name
  std::unordered_map<std::int64_t, std::uint32_t>
      process_index_;  // globalPid -> Profile::processes
  std::unordered_map<std::int64_t, model::NameId> name_of_demangled_;
  std::map<std::int64_t, std::string> memcpy_labels_;
  std::vector<Keyed> ops_;
  std::vector<std::int64_t> process_keys_;  // call keys number the processes in first-seen order
  std::vector<std::uint32_t> call_of_op_;
  std::vector<ApiCall> calls_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> domains_;  // (pid, domainId) -> name
  std::vector<RangeInstance> ranges_;
  std::map<std::string, std::size_t> unended_;  // label -> instances
  std::size_t ranges_across_threads_ = 0;
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
