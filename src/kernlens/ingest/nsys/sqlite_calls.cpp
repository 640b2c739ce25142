#include "kernlens/ingest/nsys/sqlite_calls.h"

#include <algorithm>
#include <array>

#include "kernlens/common/chunk_reader.h"
#include "kernlens/common/parallel_chunks.h"
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

// The rows of `stmt` with both ids, each to `emit`. With `order`, the rowid (column 4) of
// every row must be in it; false when one is not.
template <class Emit>
bool read_api_rows(SqliteStatement& stmt, RowidOrder* order, std::uint64_t& rows, Emit emit) {
  for (; stmt.step(); ++rows) {
    if (order && !order->next(stmt.int64(4))) return false;
    if (stmt.is_null(0) || stmt.is_null(1)) continue;
    emit(ApiRow{stmt.int64(0), stmt.int64(1), stmt.int64(2), stmt.int64(3)});
  }
  return true;
}

ApiRows read_whole_table(const DbSource& source, const std::string& sql, std::size_t estimate) {
  auto db = source.open();
  auto stmt = db ? db->prepare(sql) : Result<SqliteStatement>(db.error());
  if (!stmt) return ApiRows{{}, stmt.error()};
  ApiRows read;
  reserve_huge(read.rows, estimate);
  std::uint64_t rows = 0;
  read_api_rows(*stmt, nullptr, rows, [&](const ApiRow& r) { read.rows.push_back(r); });
  if (stmt->error()) read.error = make_error("", 0, *stmt->error());
  return read;
}

using Ranges = std::vector<std::pair<std::int64_t, std::int64_t>>;

// The table in rowid ranges, each on a connection and thread of its own, into the slots of its
// rowids; the rows then close up. nullopt unless the ranges read every row of one scan in its
// order without an error (rows_in_rowid_order): then one scan must tell what one thread sees.
std::optional<ApiRows> read_in_ranges(const DbSource& source, const std::string& sql,
                                      const Ranges& ranges) {
  ApiRows read;
  const std::int64_t first = ranges.front().first;
  const auto span = static_cast<std::size_t>(ranges.back().second - first);
  reserve_huge(read.rows, span);
  read.rows.resize(span);
  std::vector<std::size_t> counts(ranges.size(), 0);
  std::vector<std::uint64_t> rows(ranges.size(), 0);
  std::vector<char> whole(ranges.size(), 0);
  std::optional<std::uint64_t> scanned;
  run_parallel(ranges.size() + 1, [&](std::size_t i) {
    auto db = source.open();
    if (!db) return;
    if (i == ranges.size()) {
      scanned = rows_in_rowid_order(*db, kRuntime);
      return;
    }
    auto stmt = db->prepare(sql);
    if (!stmt) return;
    stmt->bind(1, ranges[i].first);
    stmt->bind(2, ranges[i].second);
    RowidOrder order(ranges[i].first, ranges[i].second);
    ApiRow* slots = read.rows.data() + (ranges[i].first - first);
    whole[i] = read_api_rows(*stmt, &order, rows[i], [&](const ApiRow& r) { slots[counts[i]++] = r; }) &&
               !stmt->error();
  });
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (!whole[i]) return std::nullopt;
    total += rows[i];
  }
  if (!scanned || total != *scanned) return std::nullopt;
  std::size_t to = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    auto from = read.rows.begin() + (ranges[i].first - first);
    std::copy(from, from + static_cast<std::ptrdiff_t>(counts[i]),
              read.rows.begin() + static_cast<std::ptrdiff_t>(to));
    to += counts[i];
  }
  read.rows.resize(to);
  return read;
}

}  // namespace

std::future<ApiRows> start_reading_api_rows(Schema& schema, const DbSource& source,
                                            std::uint64_t file_bytes, unsigned threads) {
  static constexpr std::array kColumns = {Column{"globalTid", true}, Column{"correlationId", true},
                                          Column{"start", true}, Column{"end", true}};
  if (!schema.has(kRuntime)) return std::async(std::launch::deferred, [] { return ApiRows{}; });
  // A call row is about a third of a kernel row's work: a third of the threads read calls.
  Ranges ranges = schema.rowid_ranges(kRuntime, (threads + 2) / 3, file_bytes, sizeof(ApiRow));
  auto sql = schema.select_sql(kRuntime, kColumns);
  auto range_sql = schema.select_range_sql(kRuntime, kColumns);
  if (!sql || !range_sql) {
    return std::async(std::launch::deferred,
                      [e = sql ? range_sql.error() : sql.error()] { return ApiRows{{}, e}; });
  }
  auto policy = ChunkReader::worth_reading_ahead() ? std::launch::async : std::launch::deferred;
  return std::async(policy, [source, sql = *sql, range_sql = *range_sql, ranges,
                             rows = schema.row_estimate(kRuntime, file_bytes)] {
    std::optional<ApiRows> read;
    if (!ranges.empty()) read = read_in_ranges(source, range_sql, ranges);
    return read ? std::move(*read) : read_whole_table(source, sql, rows);
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
