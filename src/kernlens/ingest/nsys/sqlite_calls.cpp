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

// Of the rows from `at` on with its key (rows(j), key(j) for j < n), the last to start
// (then the first to end).
template <class KeyAt, class RowAt>
ApiCall innermost_call(std::size_t n, const KeyAt& key, const RowAt& row, std::size_t at) {
  const ApiCall* best = &row(at);
  for (std::size_t j = at + 1; j < n && key(j) == key(at); ++j) {
    const ApiCall& r = row(j);
    if (r.start_ns > best->start_ns || (r.start_ns == best->start_ns && r.end_ns < best->end_ns))
      best = &r;
  }
  return *best;
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
  auto db = source.open_for_a_scan();
  auto stmt = db ? db->prepare(sql) : Result<SqliteStatement>(db.error());
  if (!stmt) return ApiRows{{}, {}, stmt.error()};
  ApiRows read;
  reserve_huge(read.calls, estimate);
  reserve_huge(read.correlations, estimate);
  std::uint64_t rows = 0;
  read_api_rows(*stmt, nullptr, rows, [&](const ApiRow& r) { read.add(r); });
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
  reserve_huge(read.calls, span);
  reserve_huge(read.correlations, span);
  read.calls.resize(span);
  read.correlations.resize(span);
  std::vector<std::size_t> counts(ranges.size(), 0);
  std::vector<std::uint64_t> rows(ranges.size(), 0);
  std::vector<char> whole(ranges.size(), 0);
  std::optional<std::uint64_t> scanned;
  run_parallel(ranges.size() + 1, [&](std::size_t i) {
    auto db = source.open_for_a_scan();
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
    const auto slot = static_cast<std::size_t>(ranges[i].first - first);
    whole[i] = read_api_rows(*stmt, &order, rows[i], [&](const ApiRow& r) {
                 read.calls[slot + counts[i]] = ApiCall{r.global_tid, r.start, r.end};
                 read.correlations[slot + counts[i]++] = r.correlation;
               }) && !stmt->error();
  });
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (!whole[i]) return std::nullopt;
    total += rows[i];
  }
  if (!scanned || total != *scanned) return std::nullopt;
  std::size_t to = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto from = static_cast<std::size_t>(ranges[i].first - first);
    auto close_up = [&](auto& column) {
      std::copy(column.begin() + static_cast<std::ptrdiff_t>(from),
                column.begin() + static_cast<std::ptrdiff_t>(from + counts[i]),
                column.begin() + static_cast<std::ptrdiff_t>(to));
    };
    close_up(read.calls);
    close_up(read.correlations);
    to += counts[i];
  }
  read.calls.resize(to);
  read.correlations.resize(to);
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
                      [e = sql ? range_sql.error() : sql.error()] { return ApiRows{{}, {}, e}; });
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
  const std::int64_t process = process_of(global_id);
  if (last_process_ >= process_keys_.size() || process_keys_[last_process_] != process) {  // rows come in runs
    auto it = std::find(process_keys_.begin(), process_keys_.end(), process);
    if (it == process_keys_.end()) it = process_keys_.insert(it, process);
    last_process_ = static_cast<std::size_t>(it - process_keys_.begin());
  }
  return std::uint64_t{last_process_} << 32 | static_cast<std::uint64_t>(correlation);
}

void CallMatcher::match(ApiRows rows, std::vector<Keyed>& ops) {
  sort_by_key(ops);
  const std::vector<ApiCall>& in = rows.calls;
  const std::size_t n = in.size();
  if (keyed_in_order(rows)) {  // the usual export: one process, correlation ids rising
    const auto& correlations = rows.correlations;
    std::size_t count = merge(
        ops, n, [&](std::size_t j) { return *key(in[j].thread, correlations[j]); },
        [&](std::size_t j) -> const ApiCall& { return in[j]; }, rows.calls);
    rows.correlations = {};  // freed before the calls might move to a smaller buffer
    calls_ = std::move(rows.calls);
    calls_.resize(count);
    if (calls_.capacity() / 4 > calls_.size()) calls_.shrink_to_fit();  // mostly other API calls
    return;
  }
  std::vector<Keyed> by_key;
  by_key.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (auto k = key(in[i].thread, rows.correlations[i])) by_key.push_back(Keyed{*k, i});
  }
  sort_by_key(by_key);
  calls_.resize(std::min(by_key.size(), ops.size()));  // at most one call per operation
  calls_.resize(merge(ops, by_key.size(), [&](std::size_t j) { return by_key[j].key; },
                      [&](std::size_t j) -> const ApiCall& { return in[by_key[j].index]; },
                      calls_));
}

bool CallMatcher::keyed_in_order(const ApiRows& rows) {
  std::uint64_t last = 0;
  for (std::size_t j = 0; j < rows.calls.size(); ++j) {
    // Numbers the processes as the sorted path would.
    auto k = key(rows.calls[j].thread, rows.correlations[j]);
    if (!k || *k < last) return false;
    last = *k;
  }
  return true;
}

// Writing out[count] in place is safe: every call written consumed at least one row before it
// (count <= r), and the rows read later lie past the ones just read. An operation's key is
// replaced by its call once read, and never read again.
template <class KeyAt, class RowAt>
std::size_t CallMatcher::merge(std::vector<Keyed>& ops, std::size_t n, const KeyAt& key_at,
                               const RowAt& row_at, std::vector<ApiCall>& out) {
  std::size_t r = 0, count = 0;
  for (std::size_t i = 0; i < ops.size();) {
    const std::uint64_t op_key = ops[i].key;
    while (r < n && key_at(r) < op_key) ++r;
    bool found = r < n && key_at(r) == op_key;
    if (found) out[count++] = innermost_call(n, key_at, row_at, r);
    // Every operation of one call (a CUDA graph launch starts many kernels) shares it.
    for (; i < ops.size() && ops[i].key == op_key; ++i) ops[i].key = found ? count - 1 : kNoCall;
  }
  return count;
}

}  // namespace kernlens::ingest::nsys
