#include "kernlens/ingest/nsys/sqlite_kernels.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "kernlens/ingest/nsys/sqlite_schema.h"

namespace kernlens::ingest::nsys {
namespace {

std::optional<std::string> check_times(const SqliteStatement& stmt, std::optional<std::int64_t> start,
                                       std::optional<std::int64_t> end) {
  if (!start || !end) return "no start or end time";
  // SQLite reads text such as 'abc' as 0: only integers are times.
  for (int column : {kStart, kEnd}) {
    if (stmt.type(column) != SqliteStatement::Type::kInteger) {
      return std::string(column == kStart ? "start" : "end") + " is '" +
             std::string(stmt.text(column)) + "', not an integer time in ns";
    }
  }
  if (!plausible_time(*start) || !plausible_time(*end)) {
    return "time out of range (" + std::to_string(*start) + " to " + std::to_string(*end) + " ns)";
  }
  if (*end < *start) {
    return "ends (" + std::to_string(*end) + " ns) before it starts (" + std::to_string(*start) +
           " ns)";
  }
  return std::nullopt;
}

// Grid, block, registers and shared memory; what is out of range, if anything.
std::optional<std::string> read_kernel_dims(const IntRow& row, model::LaunchConfig& l) {
  constexpr std::int64_t kMaxU32 = std::numeric_limits<std::uint32_t>::max();
  std::optional<std::string> bad;
  auto u32 = [&](int col, const char* what) -> std::uint32_t {
    const std::int64_t v = row.opt(col).value_or(0);
    if (v < 0 || v > kMaxU32) bad = std::string(what) + " " + std::to_string(v);
    return static_cast<std::uint32_t>(std::clamp<std::int64_t>(v, 0, kMaxU32));
  };
  l.grid = {u32(kGridX, "gridX"), u32(kGridY, "gridY"), u32(kGridZ, "gridZ")};
  l.block = {u32(kBlockX, "blockX"), u32(kBlockY, "blockY"), u32(kBlockZ, "blockZ")};
  if (auto regs = row.opt(kRegisters)) {
    if (*regs < 0 || *regs > std::numeric_limits<std::int32_t>::max())
      bad = "registersPerThread " + std::to_string(*regs);
    else
      l.registers_per_thread = static_cast<std::int32_t>(*regs);
  }
  for (auto [col, slot, what] :
       {std::tuple{kStaticShared, &l.static_shared_bytes, "staticSharedMemory"},
        std::tuple{kDynamicShared, &l.dynamic_shared_bytes, "dynamicSharedMemory"}}) {
    if (auto v = row.opt(col)) {
      if (*v < 0)
        bad = std::string(what) + " " + std::to_string(*v);
      else
        *slot = *v;
    }
  }
  if (bad) *bad += " is out of range";
  return bad;
}

struct NameIdsHash {
  std::size_t operator()(const NameIds& n) const {
    std::size_t h = 0;
    for (const auto& id : {n.demangled, n.short_name, n.mangled})
      h = h * 1000003u ^
          std::hash<std::int64_t>()(id.value_or(std::numeric_limits<std::int64_t>::min()));
    return h;
  }
};

// Part-local numbering, first met first. Consecutive launches often share a name and almost
// always a process: the last key is checked before the hash table.
template <class Key, class Hash = std::hash<Key>>
class FirstMet {
 public:
  // The index of `key`, and whether it is new.
  std::pair<std::uint32_t, bool> index(const Key& key) {
    if (last_ && last_->first == key) return {last_->second, false};
    auto [it, is_new] = index_.try_emplace(key, static_cast<std::uint32_t>(index_.size()));
    last_.emplace(key, it->second);
    return {it->second, is_new};
  }

 private:
  std::unordered_map<Key, std::uint32_t, Hash> index_;
  std::optional<std::pair<Key, std::uint32_t>> last_;
};

}  // namespace

std::optional<std::string> read_op_row(const SqliteStatement& stmt, const IntRow& row, std::uint32_t input,
                                       model::Launch& l, OpIds& ids) {
  auto start = row.opt(kStart), end = row.opt(kEnd);
  if (auto bad = check_times(stmt, start, end)) return bad;
  l.start_ns = *start;
  l.duration_ns = static_cast<double>(*end - *start);
  l.input = input;
  for (auto [column, what, to] : {std::tuple{kContextId, "contextId", &l.context_id},
                                   std::tuple{kStreamId, "streamId", &l.stream_id}}) {
    const std::int64_t id = row.opt(column).value_or(model::kUnknown);
    auto narrow = model::stream_id_of(id);
    if (!narrow) return std::string(what) + " " + std::to_string(id) + " needs more than CUPTI's 32 bits";
    *to = *narrow;
  }
  if (auto device = row.opt(kDeviceId)) {
    if (*device < 0 || *device > std::numeric_limits<std::int16_t>::max()) {
      return "deviceId " + std::to_string(*device) + " is not a device ordinal";
    }
    l.device_ordinal = static_cast<std::int16_t>(*device);
  }
  ids.correlation = row.opt(kCorrelationId);
  ids.global_pid = row.opt(kGlobalPid);
  ids.end = *end;
  if (ids.correlation) l.id = *ids.correlation;
  return std::nullopt;
}

std::uint64_t kernel_part_count(unsigned threads, std::uint64_t rows) {
  constexpr std::uint64_t kPartsPerThread = 4;
  return std::max(std::uint64_t{threads} * kPartsPerThread, (rows + kMostRowsAPart - 1) / kMostRowsAPart);
}

void read_kernel_part(SqliteStatement& stmt, std::uint32_t input, bool ranged, KernelPart& part,
                      const std::function<void(model::Launch&&)>& emit) {
  FirstMet<NameIds, NameIdsHash> names;
  FirstMet<std::int64_t> pids;
  FirstMet<model::LaunchConfig, model::LaunchConfigHash> configs;
  // The launches read and the latest end are written to the part once, on the way out: the
  // parts lie side by side, and a write a row kept a neighbour's cache line moving between cores.
  struct Kept {
    KernelPart& part;
    std::size_t rows;
    std::int64_t trace_end;
    ~Kept() {
      part.rows = rows;
      part.trace_end = trace_end;
    }
  } kept{part, part.rows, part.trace_end};
  std::size_t row = 0;
  RowidOrder order(part.first_rowid, part.end_rowid);
  IntRow values;
  const int columns = kKernelColumnCount + (ranged ? 1 : 0);
  while (stmt.step()) {
    values.read(stmt, columns);
    if (ranged) {
      const RowidOrder::Row at = order.next(values[kKernelColumnCount]);
      if (at == RowidOrder::Row::kPastTheEnd) break;
      if (at == RowidOrder::Row::kOutOfOrder) {
        part.out_of_order = true;
        return;
      }
    }
    ++row;
    model::Launch l;
    OpIds ids;
    if (auto bad = read_op_row(stmt, values, input, l, ids)) {
      part.bad_row.emplace(row, std::move(*bad));
      return;
    }
    kept.trace_end = std::max(kept.trace_end, ids.end);
    if (ids.global_pid) {
      auto [pid, is_new] = pids.index(*ids.global_pid);
      if (is_new) part.pids.push_back(*ids.global_pid);
      l.process = pid + 1;
    }
    // The name is looked up when the parts are merged; a bad name, at its first row, comes
    // before a bad dimension of the same row (as in one scan).
    NameIds name{values.opt(kDemangled), values.opt(kShortName), values.opt(kMangled)};
    auto [local, is_new] = names.index(name);
    if (is_new) {
      part.names.push_back(name);
      part.name_first_row.push_back(row);
    }
    l.name = local;
    model::LaunchConfig config;
    if (auto bad = read_kernel_dims(values, config)) {
      part.bad_row.emplace(row, std::move(*bad));
      return;
    }
    auto [config_index, new_config] = configs.index(config);
    if (new_config) part.configs.push_back(config);
    l.config = config_index;
    emit(std::move(l));
    kept.rows = row;
  }
  if (stmt.error()) part.sqlite_error = *stmt.error();
}

}  // namespace kernlens::ingest::nsys
