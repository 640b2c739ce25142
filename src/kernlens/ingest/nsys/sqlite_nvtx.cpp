#include "kernlens/ingest/nsys/sqlite_nvtx.h"

#include <algorithm>
#include <array>

namespace kernlens::ingest::nsys {
namespace {

NvtxTypes documented_nvtx_types() { return NvtxTypes{{59, 70}, {60, 71}, 75}; }

std::string in_list(const std::vector<std::int64_t>& ids) {
  std::string list;
  for (auto id : ids) list += (list.empty() ? "" : ", ") + std::to_string(id);
  return list;
}

constexpr std::array kNvtxColumns = {Column{"start", true}, Column{"end"},      Column{"eventType", true},
                                     Column{"text"},        Column{"textId"},   Column{"domainId"},
                                     Column{"globalTid", true}, Column{"endGlobalTid"}};
enum NvtxColumn : int { kNStart, kNEnd, kNType, kNText, kNTextId, kNDomain, kNTid, kNEndTid };

}  // namespace

Result<NvtxTypes> NvtxRanges::types() {
  NvtxTypes types;
  if (!schema_.has("ENUM_NSYS_EVENT_TYPE")) return documented_nvtx_types();
  static constexpr std::array kColumns = {Column{"id", true}, Column{"name", true}};
  auto stmt = schema_.select("ENUM_NSYS_EVENT_TYPE", kColumns);
  if (!stmt) return stmt.error();
  while (stmt->step()) {
    std::string_view name = stmt->text(1);
    std::int64_t id = stmt->int64(0);
    if (name == "NvtxPushPopRange" || name == "NvtxtPushPopRange") types.push_pop.push_back(id);
    if (name == "NvtxStartEndRange" || name == "NvtxtStartEndRange") types.start_end.push_back(id);
    if (name == "NvtxDomainCreate") types.domain_create = id;
  }
  if (auto s = schema_.finished(*stmt, "ENUM_NSYS_EVENT_TYPE"); !s) return s.error();
  // Before schema 3.18 lazy exports could write ENUM tables incompletely.
  if (types.push_pop.empty() && types.start_end.empty()) return documented_nvtx_types();
  return types;
}

// A range's or domain's text: the registered string (textId), else the explicit text.
std::string NvtxRanges::text(const SqliteStatement& stmt) {
  if (auto id = stmt.opt_int64(kNTextId)) {
    if (const auto& s = strings_.get(*id)) return *s;
  }
  return std::string(stmt.text(kNText));
}

Status NvtxRanges::read_domains(const NvtxTypes& types) {
  if (!types.domain_create) return ok_status();
  auto stmt = schema_.select(kNvtx, kNvtxColumns, "eventType = " + std::to_string(*types.domain_create));
  if (!stmt) return stmt.error();
  while (stmt->step()) {
    auto domain = stmt->opt_int64(kNDomain);
    if (!domain) continue;
    // Domain ids are per process; the first creation names it.
    domains_.try_emplace(std::pair{pid_of(stmt->int64(kNTid)), *domain}, text(*stmt));
  }
  return schema_.finished(*stmt, kNvtx);
}

Status NvtxRanges::read() {
  if (!schema_.has(kNvtx)) return ok_status();
  auto kinds = types();
  if (!kinds) return kinds.error();
  if (kinds->push_pop.empty() && kinds->start_end.empty()) return ok_status();
  if (auto s = read_domains(*kinds); !s) return s;
  std::vector<std::int64_t> range_types = kinds->push_pop;
  range_types.insert(range_types.end(), kinds->start_end.begin(), kinds->start_end.end());
  auto stmt = schema_.select(kNvtx, kNvtxColumns, "eventType IN (" + in_list(range_types) + ")");
  if (!stmt) return stmt.error();
  // Room for every event of the table at once, for ranges: growing by doubling copied the
  // ranges read and faulted in each new block (a tenth of the read's time). Pages never written
  // are never faulted in, so room for events that are not ranges costs no memory.
  ranges_.reserve(schema_.row_estimate(kNvtx, file_bytes_));
  while (stmt->step()) {
    if (!stmt->is_null(kNEndTid)) {  // ended on another thread: nsys does not project these
      ++ranges_across_threads_;
      continue;
    }
    std::int64_t tid = stmt->int64(kNTid);
    auto domain = stmt->opt_int64(kNDomain);
    auto d = domain ? domains_.find({pid_of(tid), *domain}) : domains_.end();
    bool push_pop =
        std::find(kinds->push_pop.begin(), kinds->push_pop.end(), stmt->int64(kNType)) != kinds->push_pop.end();
    model::NvtxRange range{d == domains_.end() ? std::string() : d->second, text(*stmt),
                           push_pop ? model::RangeKind::kPushPop : model::RangeKind::kStartEnd};
    std::int64_t start = stmt->int64(kNStart);
    auto end = stmt->opt_int64(kNEnd);
    latest_ns_ = std::max({latest_ns_, start, end.value_or(start)});
    if (!end) ++unended_[model::range_label(range)];
    ranges_.push_back(RangeInstance{tid, start, end.value_or(kOpenEnd), std::move(range)});
  }
  return schema_.finished(*stmt, kNvtx);
}

void NvtxRanges::warn(ReadContext& ctx, std::int64_t trace_end) const {
  for (const auto& [label, count] : unended_) {
    ctx.warn(0, "NVTX range '" + label + "' never ends" +
                    (count > 1 ? " (" + std::to_string(count) + " instances)" : "") +
                    ": it is taken to end with the trace, at " + std::to_string(trace_end) + " ns");
  }
  if (ranges_across_threads_ > 0) {
    ctx.warn(0, std::to_string(ranges_across_threads_) +
                    " NVTX ranges end on another thread than the one they start on; like Nsight "
                    "Systems' GPU projection, kernlens attributes no kernel to them");
  }
}

}  // namespace kernlens::ingest::nsys
