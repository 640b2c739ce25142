#include "kernlens/ingest/nsys/sqlite_calls.h"

#include <algorithm>
#include <array>

#include "kernlens/common/chunk_reader.h"
#include "kernlens/ingest/nsys/sqlite_schema.h"

namespace kernlens::ingest::nsys {
namespace {

// Sorts by key, unless already sorted: both tables usually come in correlation-id order.
void sort_by_key(std::vector<Keyed>& v) {
  auto by_key = [](const Keyed& a, const Keyed& b) { return a.key < b.key; };
  if (!std::is_sorted(v.begin(), v.end(), by_key)) std::sort(v.begin(), v.end(), by_key);
}

// Of the rows with the key at `at`, the last to start (then the first to end).
ApiCall innermost_call(const std::vector<ApiRow>& rows, const std::vector<Keyed>& by_key, std::size_t at) {
  const ApiRow* best = &rows[by_key[at].index];
  for (std::size_t j = at + 1; j < by_key.size() && by_key[j].key == by_key[at].key; ++j) {
    const ApiRow& r = rows[by_key[j].index];
    if (r.start > best->start || (r.start == best->start && r.end < best->end)) best = &r;
  }
  return ApiCall{best->global_tid, best->start, best->end};
}

ApiRows read_api_rows(const SqliteDb& db, const std::string& sql, std::size_t estimate) {
  auto stmt = db.prepare(sql);
  if (!stmt) return ApiRows{{}, stmt.error()};
  ApiRows read;
  reserve_huge(read.rows, estimate);
  while (stmt->step()) {
    if (stmt->is_null(0) || stmt->is_null(1)) continue;
    read.rows.push_back(ApiRow{stmt->int64(0), stmt->int64(1), stmt->int64(2), stmt->int64(3)});
  }
  if (stmt->error()) read.error = make_error("", 0, *stmt->error());
  return read;
}

}  // namespace

std::future<ApiRows> start_reading_api_rows(Schema& schema, const DbSource& source, std::uint64_t file_bytes) {
  static constexpr std::array kColumns = {Column{"globalTid", true}, Column{"correlationId", true},
                                          Column{"start", true}, Column{"end", true}};
  if (!schema.has(kRuntime))
    return std::async(std::launch::deferred, [] { return ApiRows{}; });
  auto sql = schema.select_sql(kRuntime, kColumns);
  if (!sql) return std::async(std::launch::deferred, [e = sql.error()] { return ApiRows{{}, e}; });
  auto policy = ChunkReader::worth_reading_ahead() ? std::launch::async : std::launch::deferred;
  return std::async(policy, [source, sql = *sql, rows = schema.row_estimate(kRuntime, file_bytes)] {
    auto db = source.open();
    if (!db) return ApiRows{{}, db.error()};
    return read_api_rows(*db, sql, rows);
  });
}

std::optional<std::uint64_t> CallMatcher::key(std::int64_t global_id, std::int64_t correlation) {
  if (correlation < 0 || correlation > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  std::int64_t process = process_of(global_id);
  auto it = std::find(process_keys_.begin(), process_keys_.end(), process);
  if (it == process_keys_.end()) it = process_keys_.insert(it, process);
  return static_cast<std::uint64_t>(it - process_keys_.begin()) << 32 | static_cast<std::uint64_t>(correlation);
}

void CallMatcher::match(const std::vector<ApiRow>& rows, std::vector<Keyed>& ops) {
  std::vector<Keyed> by_key;
  by_key.reserve(rows.size());
  for (std::uint32_t i = 0; i < rows.size(); ++i) {
    if (auto k = key(rows[i].global_tid, rows[i].correlation)) by_key.push_back(Keyed{*k, i});
  }
  sort_by_key(by_key);
  sort_by_key(ops);
  call_of_op_.assign(ops.size(), kNoCall);
  std::size_t r = 0;
  for (std::size_t i = 0; i < ops.size();) {
    const std::uint64_t op_key = ops[i].key;
    while (r < by_key.size() && by_key[r].key < op_key) ++r;
    bool found = r < by_key.size() && by_key[r].key == op_key;
    if (found) calls_.push_back(innermost_call(rows, by_key, r));
    // Every operation of one call (a CUDA graph launch starts many kernels) shares it.
    for (; i < ops.size() && ops[i].key == op_key; ++i) {
      if (found) call_of_op_[i] = static_cast<std::uint32_t>(calls_.size() - 1);
    }
  }
}

}  // namespace kernlens::ingest::nsys
