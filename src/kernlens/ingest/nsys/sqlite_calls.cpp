#include "kernlens/ingest/nsys/sqlite_calls.h"

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>

#include "kernlens/common/chunk_reader.h"
#include "kernlens/common/memory.h"
#include "kernlens/common/parallel_chunks.h"
#include "kernlens/common/step_times.h"
#include "kernlens/ingest/nsys/sqlite_schema.h"

namespace kernlens::ingest::nsys {

std::optional<std::uint32_t> ApiCalls::find(std::int64_t global_id, std::int64_t correlation, Cursor& cursor) const {
  if (!has_key(correlation)) return std::nullopt;
  const std::int64_t process_id = process_of(global_id);
  if (cursor.process >= processes_.size() || processes_[cursor.process] != process_id) {  // rows come in runs
    auto it = std::find(processes_.begin(), processes_.end(), process_id);
    if (it == processes_.end()) return kNoCall;  // no call has this process
    cursor.process = static_cast<std::size_t>(it - processes_.begin());
  }
  const std::size_t process = cursor.process;
  const auto c = static_cast<std::uint32_t>(correlation);
  if (process >= process_end_.size()) return kNoCall;
  const std::uint32_t begin = process == 0 ? 0 : process_end_[process - 1], end_at = process_end_[process];
  const std::uint32_t next = cursor.found + 1;
  if (next >= begin && next < end_at && correlations_[next] == c) return cursor.found = next;
  const auto first = correlations_.begin() + begin, end = correlations_.begin() + end_at;
  auto it = std::lower_bound(first, end, c);
  if (it == end || *it != c) return kNoCall;
  return cursor.found = static_cast<std::uint32_t>(it - correlations_.begin());
}

std::uint64_t ApiCalls::key_of(std::uint32_t entry) const {
  const auto process = std::upper_bound(process_end_.begin(), process_end_.end(), entry) - process_end_.begin();
  return std::uint64_t(process) << 32 | correlations_[entry];
}

std::optional<std::uint64_t> ApiCalls::last_key() const {
  if (correlations_.empty()) return std::nullopt;
  return std::uint64_t(process_end_.size() - 1) << 32 | correlations_.back();
}

void ApiCalls::append(std::uint64_t key) {
  const std::size_t process = key >> 32;
  while (process_end_.size() <= process) process_end_.push_back(static_cast<std::uint32_t>(correlations_.size()));
  correlations_.push_back(static_cast<std::uint32_t>(key));
  process_end_.back() = static_cast<std::uint32_t>(correlations_.size());
}

namespace {

// The rows read whole, in two columns (for the sort by key), or the error that stopped them.
struct ApiRows {
  std::vector<ApiCall> calls;
  std::vector<std::int64_t> correlations;
  std::optional<Error> error;
};

// The rows of `stmt` with both ids, each to `emit` (false from emit stops). With `order`, the
// rowid (column 4) of every row must be in it (false when one is not), the first past its end
// ending the rows.
template <class Emit>
bool read_api_rows(SqliteStatement& stmt, RowidOrder* order, std::uint64_t& rows, Emit emit) {
  std::array<std::int64_t, 5> v{};
  const int columns = order ? 5 : 4;
  for (; stmt.step(); ++rows) {
    const std::uint64_t nulls = stmt.int64_columns(columns, v.data());
    if (order) {
      const RowidOrder::Row at = order->next(v[4]);
      if (at == RowidOrder::Row::kPastTheEnd) return true;
      if (at == RowidOrder::Row::kOutOfOrder) return false;
    }
    if (nulls & 0b11) continue;  // no globalTid or correlationId
    if (!emit(ApiRow{v[0], v[1], v[2], v[3]})) return false;
  }
  return true;
}

}  // namespace

// A stretch of rows' calls after its first key's, kept as ApiCallsBuilder::add_in_order keeps
// them (each key's inner call, a place interned at each call kept), on the thread that read the
// stretch, in numbers of its own: processes by first appearance, places by first use, sets the
// stretch's own sweep's. The builder renumbers them (add_keyed), where keeping each row itself
// took ~70 ns a row on one thread: the end of the calls' read on 16 threads. The first key's rows
// are the builder's own to keep, as its last key may be theirs.
struct KeyedCalls {
  struct ThreadSpan {  // a thread's first and last call among the keys', for the builder's order check
    ApiCall first, last;
  };
  std::size_t first_key_rows = 0;       // rows [0, this): the first key's, and the keyless among them
  FirstComeNumbers<std::int64_t> processes;
  std::vector<std::uint64_t> keys;      // process number << 32 | correlation id, rising
  std::vector<std::uint32_t> place_of;  // per key: into places
  FirstComeNumbers<CallPlace, CallPlaceHash> places;  // .set: into the stretch's own sets
  std::vector<ThreadSpan> threads;
  ApiCall kept{};                       // the last key's call
  std::int64_t latest_end_ns = std::numeric_limits<std::int64_t>::min();  // of the rows after first_key_rows
  bool rising = true;                   // false: a key below the one before (the calls are not in order)

  // `rows` with their sets (set_of_row: into the stretch's own sets; any for a keyless row).
  void keep(const std::vector<ApiRow>& rows, const std::vector<std::uint32_t>& set_of_row);

 private:
  void see(const ApiCall& call);  // the call's thread's span reaches it

  std::size_t last_thread_ = 0;
};

void KeyedCalls::keep(const std::vector<ApiRow>& rows, const std::vector<std::uint32_t>& set_of_row) {
  processes.clear();
  keys.clear();
  place_of.clear();
  places.clear();
  threads.clear();
  last_thread_ = 0;
  latest_end_ns = std::numeric_limits<std::int64_t>::min();
  rising = true;
  std::size_t k = 0;
  std::optional<std::pair<std::int64_t, std::int64_t>> first;  // the first key's (process, correlation id)
  for (; k < rows.size(); ++k) {
    if (!ApiCalls::has_key(rows[k].correlation)) continue;
    const std::pair id{process_of(rows[k].global_tid), rows[k].correlation};
    if (first && id != *first) break;
    first = id;
  }
  first_key_rows = k;
  for (; k < rows.size(); ++k) {
    const ApiRow& r = rows[k];
    latest_end_ns = std::max(latest_end_ns, r.end);
    if (!ApiCalls::has_key(r.correlation)) continue;
    const ApiCall call{r.global_tid, r.start, r.end};
    see(call);
    const std::uint64_t id = std::uint64_t{processes.number(process_of(r.global_tid))} << 32 | std::uint32_t(r.correlation);
    if (!keys.empty() && id <= keys.back()) {
      if (id < keys.back()) {
        rising = false;
        return;
      }
      if (is_inner_call(call, kept)) {
        kept = call;
        place_of.back() = places.number(CallPlace{call.thread, set_of_row[k]});
      }
      continue;
    }
    kept = call;
    keys.push_back(id);
    place_of.push_back(places.number(CallPlace{call.thread, set_of_row[k]}));
  }
}

void KeyedCalls::see(const ApiCall& call) {
  if (last_thread_ >= threads.size() || threads[last_thread_].first.thread != call.thread) {
    auto it = std::find_if(threads.begin(), threads.end(), [&](const ThreadSpan& t) { return t.first.thread == call.thread; });
    if (it == threads.end()) {
      last_thread_ = threads.size();
      threads.push_back(ThreadSpan{call, call});
      return;
    }
    last_thread_ = static_cast<std::size_t>(it - threads.begin());
  }
  threads[last_thread_].last = call;
}

class ApiCallsBuilder {
 public:
  explicit ApiCallsBuilder(const std::vector<RangeInstance>& ranges) : enclosing_(ranges) {}

  // One pass over the rows, each call kept as it comes: nullopt (start again with from_rows) at
  // a key that falls or a call earlier on its thread than the one before. `for_each_row(emit)`
  // gives each row with both ids to emit, and stops (returning false) when emit returns false.
  template <class ForEachRow>
  std::optional<ApiCalls> in_order(const ForEachRow& for_each_row, std::size_t estimate) {
    reserve(estimate);
    if (!for_each_row([&](const ApiRow& r) { return add_in_order(r); })) return std::nullopt;
    return finish();
  }

  // in_order a row at a time: reserve, add_in_order each row (false: out of order, stop), finish.
  void reserve(std::size_t estimate) {
    reserve_huge(out_.correlations_, estimate);
    reserve_huge(out_.place_of_, estimate);
  }
  // reserve's room faulted in on `threads` threads: the one thread that builds the calls read
  // in ranges faulted in each page as it appended (8 M calls: 64 MB, 8% of its work).
  void prefault(unsigned threads) {
    for (auto* v : {&out_.correlations_, &out_.place_of_})
      prefault_in_parallel(v->data() + v->size(), (v->capacity() - v->size()) * sizeof(*v->data()), threads);
  }
  bool add_in_order(const ApiRow& r) {
    return add_in_order(r, [&](const ApiCall& call) { return enclosing_.set_of(call); });
  }
  // The same for a row whose set another sweep found (a set of this builder's, intern()).
  bool add_in_order(const ApiRow& r, std::uint32_t set) {
    return add_in_order(r, [&](const ApiCall& call) { return enclosing_.in_order(call) ? std::optional(set) : std::nullopt; });
  }
  // A stretch's rows whose calls `keyed` kept (KeyedCalls::keep), as add_in_order each row:
  // `set` numbers the stretch's own sets among this builder's. false: out of order.
  bool add_keyed(const std::vector<ApiRow>& rows, const std::vector<std::uint32_t>& set_of_row,
                 const std::vector<std::uint32_t>& set, const KeyedCalls& keyed) {
    if (!keyed.rising) return false;
    for (std::size_t k = 0; k < keyed.first_key_rows; ++k) {
      if (!add_in_order(rows[k], set[set_of_row[k]])) return false;
    }
    out_.latest_end_ns_ = std::max(out_.latest_end_ns_, keyed.latest_end_ns);
    if (keyed.keys.empty()) return true;
    // The stretch's process numbers rise with its keys: so must the builder's for them.
    process_.clear();
    for (std::int64_t process : keyed.processes.values()) {
      process_.push_back(processes_.number(process));
      if (process_.size() > 1 && process_.back() <= process_[process_.size() - 2]) return false;
    }
    auto key = [&](std::uint64_t own) { return process_[own >> 32] << 32 | (own & 0xffffffffU); };
    if (const auto last = out_.last_key(); last && key(keyed.keys.front()) <= *last) return false;
    for (const KeyedCalls::ThreadSpan& span : keyed.threads) {
      if (!enclosing_.in_order(span.first, span.last)) return false;
    }
    place_.clear();
    for (const CallPlace& p : keyed.places.values()) place_.push_back(places_.number(CallPlace{p.thread, set[p.set]}));
    for (std::size_t k = 0; k < keyed.keys.size(); ++k) {
      out_.append(key(keyed.keys[k]));
      out_.place_of_.push_back(place_[keyed.place_of[k]]);
    }
    kept_ = keyed.kept;
    return true;
  }
  std::uint32_t intern(RangeSet&& set, std::size_t hash) { return enclosing_.intern(std::move(set), hash); }
  const EnclosingRanges& enclosing() const { return enclosing_; }
  ApiCalls finish() {
    out_.sets_ = enclosing_.take_sets();
    out_.processes_ = processes_.take();
    out_.places_ = places_.take();
    return std::move(out_);
  }

  // Every row at once: sorted by key, the inner call of each key, then the calls in (thread,
  // start, end) order through the ranges.
  ApiCalls from_rows(ApiRows rows) {
    out_.error_ = std::move(rows.error);
    struct Keyed {
      std::uint64_t key;
      std::uint32_t row;
    };
    std::vector<Keyed> by_key;
    by_key.reserve(rows.calls.size());
    for (std::uint32_t i = 0; i < rows.calls.size(); ++i) {
      out_.latest_end_ns_ = std::max(out_.latest_end_ns_, rows.calls[i].end_ns);
      if (auto k = key(rows.calls[i].thread, rows.correlations[i])) by_key.push_back(Keyed{*k, i});
    }
    rows.correlations = {};
    std::stable_sort(by_key.begin(), by_key.end(), [](const Keyed& a, const Keyed& b) { return a.key < b.key; });
    std::vector<ApiCall> calls;  // the inner call of each key
    for (const Keyed& k : by_key) {
      const ApiCall& call = rows.calls[k.row];
      if (out_.last_key() == k.key) {
        if (is_inner_call(call, calls.back())) calls.back() = call;
      } else {
        out_.append(k.key);
        calls.push_back(call);
      }
    }
    by_key = {};
    rows.calls = {};
    const std::vector<std::uint32_t> order = sweep_order(calls);
    out_.ranks_.resize(calls.size());
    out_.place_of_.resize(calls.size());
    for (std::uint32_t rank = 0; rank < order.size(); ++rank) {
      const ApiCall& call = calls[order[rank]];
      out_.ranks_[order[rank]] = rank;
      out_.place_of_[order[rank]] = places_.number(CallPlace{call.thread, *enclosing_.set_of(call)});  // in order: a set
    }
    return finish();
  }

  static void set_error(ApiCalls& calls, Error e) { calls.error_ = std::move(e); }

 private:
  template <class SetOf>
  bool add_in_order(const ApiRow& r, const SetOf& set_of) {
    out_.latest_end_ns_ = std::max(out_.latest_end_ns_, r.end);
    auto key = this->key(r.global_tid, r.correlation);
    if (!key) return true;
    const ApiCall call{r.global_tid, r.start, r.end};
    auto set = set_of(call);
    const auto last = out_.last_key();
    if (!set || (last && *key < *last)) return false;
    if (last && *key == *last) {
      if (is_inner_call(call, kept_)) {
        kept_ = call;
        out_.place_of_.back() = places_.number(CallPlace{call.thread, *set});
      }
      return true;
    }
    kept_ = call;
    out_.append(*key);
    out_.place_of_.push_back(places_.number(CallPlace{call.thread, *set}));
    return true;
  }

  // The key of (process of global_id, correlation), numbering a new process.
  std::optional<std::uint64_t> key(std::int64_t global_id, std::int64_t correlation) {
    if (!ApiCalls::has_key(correlation)) return std::nullopt;
    return std::uint64_t{processes_.number(process_of(global_id))} << 32 | static_cast<std::uint64_t>(correlation);
  }

  EnclosingRanges enclosing_;
  ApiCalls out_;
  ApiCall kept_{};  // in_order's: the call of the last key
  FirstComeNumbers<std::int64_t> processes_;  // the keys' process numbers
  FirstComeNumbers<CallPlace, CallPlaceHash> places_;
  std::vector<std::uint64_t> process_;  // add_keyed's: a stretch's process numbers here
  std::vector<std::uint32_t> place_;    // and its place numbers
};

namespace {

ApiRows read_whole_table(const DbSource& source, const std::string& sql, std::size_t estimate) {
  auto db = source.open_for_a_scan();
  auto stmt = db ? db->prepare(sql) : Result<SqliteStatement>(db.error());
  if (!stmt) return ApiRows{{}, {}, stmt.error()};
  ApiRows read;
  reserve_huge(read.calls, estimate);
  reserve_huge(read.correlations, estimate);
  std::uint64_t rows = 0;
  read_api_rows(*stmt, nullptr, rows, [&](const ApiRow& r) {
    read.calls.push_back(ApiCall{r.global_tid, r.start, r.end});
    read.correlations.push_back(r.correlation);
    return true;
  });
  if (stmt->error()) read.error = make_error("", 0, *stmt->error());
  return read;
}

using Ranges = std::vector<std::pair<std::int64_t, std::int64_t>>;

// The table in rowid ranges, each on a connection and thread of its own, into the slots of its
// rowids; the rows then close up. nullopt unless the ranges read every row of one scan in its
// order without an error (rows_of_one_scan): then one scan must tell what one thread sees.
std::optional<ApiRows> read_in_ranges(const DbSource& source, const std::string& sql,
                                      const Ranges& ranges, const RowCount& count) {
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
  run_parallel(ranges.size(), [&](std::size_t i) {
    auto db = source.open_for_a_scan();
    if (!db) return;
    auto stmt = db->prepare(sql);
    if (!stmt) return;
    stmt->bind(1, ranges[i].first);
    RowidOrder order(ranges[i].first, ranges[i].second);
    const auto slot = static_cast<std::size_t>(ranges[i].first - first);
    whole[i] = read_api_rows(*stmt, &order, rows[i], [&](const ApiRow& r) {
                 read.calls[slot + counts[i]] = ApiCall{r.global_tid, r.start, r.end};
                 read.correlations[slot + counts[i]++] = r.correlation;
                 return true;
               }) && !stmt->error();
  });
  const std::optional<std::uint64_t> scanned = count.rows_if_begun();
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

// How to read the calls, on up to `parts` threads: the rowid ranges are planned on the calls'
// own thread (planning them for read_in_ranges counts the rows where the rowids are not dense,
// a scan of the table's pages that held up the kernels when it ran before them).
struct ApiCallsPlan {
  DbSource source;
  std::string sql, range_sql;
  std::uint64_t parts, file_bytes;
  std::size_t rows;  // the table's row_estimate
  RowCount count;    // begun before (begin_api_calls_count): a read in ranges is checked against it
  // The read's other threads, which read ranges too as `freed` hands each over (where set).
  unsigned later_parts;
  std::shared_ptr<const ThreadHandover> freed;
  CpuTally* cpu;  // charged with the read's CPU, where set (run_parallel's threads with it)
};

// A call row is about a third of a kernel row's work, but the calls begin after the NVTX
// ranges and ended the read on 16 threads when a third of the threads read them (~20 ms after
// the kernel rows): half of them do (16 threads: 0.254 -> 0.234 s a million-kernel export), and
// the other half join them one by one as the kernel rows' threads run out of parts
// (ApiCallsPlan::freed). All of them from the start was slower (0.256 -> 0.264 s) and held more.
std::uint64_t call_threads(unsigned threads) {
  return (threads + 1) / 2;
}

// The calls read in order are cut into this many rowid ranges a thread at least, and ranges of
// at most kRangeRows rows: the ranges read and not yet built are held (2 a thread).
constexpr std::uint64_t kRangesPerThread = 4;
constexpr std::uint64_t kRangeRows = 4096;

// Connections to the export with the range SELECT prepared, lent to whichever thread reads a
// range: as many as read at once, not one a slot.
class RangeStatements {
 public:
  explicit RangeStatements(const ApiCallsPlan& plan) : plan_(plan) {}

  struct Lent {
    SqliteDb db;
    SqliteStatement stmt;  // after db: destroyed first
  };
  // A connection, opened when none is free; null when the export cannot be opened.
  std::unique_ptr<Lent> lend() {
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        auto lent = std::move(free_.back());
        free_.pop_back();
        return lent;
      }
    }
    auto db = plan_.source.open_for_a_scan();
    if (!db) return nullptr;
    auto stmt = db->prepare(plan_.range_sql);
    if (!stmt) return nullptr;
    return std::unique_ptr<Lent>(new Lent{std::move(*db), std::move(*stmt)});
  }
  void give_back(std::unique_ptr<Lent> lent) {
    std::lock_guard lock(mutex_);
    free_.push_back(std::move(lent));
  }
  // Closes the connections, each on a thread of its own: closing one frees the export's whole
  // schema it parsed (every table's columns), and closing 16 one after the other was ~2 ms on
  // one thread at the end of the calls' read, which the read waits for. None may be lent.
  ~RangeStatements() {
    run_parallel(free_.size(), [&](std::size_t i) { free_[i].reset(); });
  }

 private:
  const ApiCallsPlan& plan_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Lent>> free_;
};

// One rowid range's rows, read for the builder, the NVTX ranges around each call and the calls
// kept (KeyedCalls): found on the thread that read the range, with a sweep of the range's own
// (EnclosingRanges::fresh), where the one builder took ~60 ns a call finding the ranges and ~70
// keeping the calls (the calls' read ended after the kernels' on 16 threads). The builder still
// checks that the calls come in order across the ranges (add_range).
struct alignas(kThreadStateAlign) RangeRows {  // filled row by row, slots side by side
  std::vector<ApiRow> rows;
  std::uint64_t seen = 0;  // the range's rows, with both ids or not
  bool whole = false;      // read to its end in rowid order, without an error
  std::vector<std::uint32_t> set_of_row;  // by row: an index into own_sets
  std::vector<RangeSet> own_sets;         // moved into the builder's (add_range)
  std::vector<std::size_t> own_set_hashes;  // EnclosingRanges::hash_of each, worked out here
  bool in_order = false;  // the sweep found every row's set: the calls came in order on each thread
  KeyedCalls keyed;       // where in_order

  void read(RangeStatements& statements, std::pair<std::int64_t, std::int64_t> range, const EnclosingRanges& enclosing) {
    read_rows(statements, range);
    sweep(enclosing);
  }

  // The sets and calls of `rows`, read whole.
  void sweep(const EnclosingRanges& enclosing) {
    set_of_row.clear();
    in_order = false;
    if (!whole) return;
    const std::unique_ptr<EnclosingRanges> sweep = enclosing.fresh();
    for (const ApiRow& r : rows) {
      if (!ApiCalls::has_key(r.correlation)) {  // no call kept: nor swept, as the builder does
        set_of_row.push_back(0);
        continue;
      }
      auto set = sweep->set_of(ApiCall{r.global_tid, r.start, r.end});
      if (!set) return;
      set_of_row.push_back(*set);
    }
    own_sets = sweep->take_sets();
    own_set_hashes.clear();
    for (const RangeSet& s : own_sets) own_set_hashes.push_back(EnclosingRanges::hash_of(s));
    keyed.keep(rows, set_of_row);
    in_order = true;
  }

 private:
  void read_rows(RangeStatements& statements, std::pair<std::int64_t, std::int64_t> range) {
    rows.clear();
    // At once: the doublings on the way, freed on this thread, would stay in its malloc arena.
    rows.reserve(static_cast<std::size_t>(std::clamp<std::int64_t>(range.second - range.first, 0, static_cast<std::int64_t>(kRangeRows))));
    seen = 0;
    whole = false;
    auto lent = statements.lend();
    if (!lent) return;
    SqliteStatement& stmt = lent->stmt;
    stmt.reset();
    stmt.bind(1, range.first);
    RowidOrder order(range.first, range.second);
    whole = read_api_rows(stmt, &order, seen, [&](const ApiRow& r) {
              rows.push_back(r);
              return true;
            }) && !stmt.error();
    statements.give_back(std::move(lent));
  }
};

// The next range's calls, swept, to the builder; false when they are not in order after the
// calls before. The range's sets are moved into the builder's.
bool add_range(ApiCallsBuilder& builder, RangeRows& read) {
  if (!read.whole || !read.in_order) return false;
  std::vector<std::uint32_t> set(read.own_sets.size());  // the range's sets as the builder's
  for (std::size_t k = 0; k < set.size(); ++k) set[k] = builder.intern(std::move(read.own_sets[k]), read.own_set_hashes[k]);
  return builder.add_keyed(read.rows, read.set_of_row, set, read.keyed);
}

// The calls kept as they come (ApiCallsBuilder::in_order), their rows read in rowid ranges on
// up to plan.threads threads and handed to the one builder in rowid order as each range is
// ready (run_ordered_parts): the builder is about a sixth of a scan's work, and one thread
// scanning the table was most of the read at 16 threads. Nullopt when the calls are not in
// order, or the ranges did not read every row of one scan (damage): one scan tells then.
std::optional<ApiCalls> read_in_order_in_ranges(const ApiCallsPlan& plan, const Ranges& ranges,
                                                const std::vector<RangeInstance>& nvtx) {
  // Two slots a thread, the later threads' too: with two a first thread only, the 16 threads
  // that read the calls after the kernel rows held one range each, and all waited for the
  // oldest to be built before taking the next. A slot is ~200 KB.
  constexpr std::size_t kSlotsPerThread = 2;
  const auto threads = static_cast<unsigned>(plan.parts);
  const unsigned later = plan.freed ? plan.later_parts : 0;
  std::vector<RangeRows> slots(std::size_t{threads + later} * kSlotsPerThread);
  RangeStatements statements(plan);
  ApiCallsBuilder builder(nvtx);
  builder.reserve(plan.rows);
  builder.prefault(threads);
  std::uint64_t rows = 0;
  bool whole = true;
  auto join = [&](std::size_t thread) {
    if (thread >= threads) plan.freed->wait_for(thread - threads + 1);
  };
  const std::size_t merged = run_ordered_parts(
      threads + later, slots.size(), [&](std::size_t i, std::size_t) { return i < ranges.size(); },
      [&](std::size_t i, std::size_t slot) { slots[slot].read(statements, ranges[i], builder.enclosing()); },
      [&](std::size_t, std::size_t slot) {
        rows += slots[slot].seen;
        return whole = add_range(builder, slots[slot]);
      },
      join);
  const std::optional<std::uint64_t> scanned = plan.count.rows_if_begun();
  if (!whole || merged != ranges.size() || rows != scanned) return std::nullopt;
  return builder.finish();
}

// The runtime table's rowid ranges, planned on a connection closed before they are read (its
// close, after the read, was on the path the read's end waits for).
Ranges plan_ranges(const ApiCallsPlan& plan, std::uint64_t parts, std::size_t slot_bytes) {
  auto db = plan.source.open();
  return db ? rowid_ranges(*db, kRuntime, parts, plan.rows, plan.file_bytes, slot_bytes) : Ranges{};
}

ApiCalls read_api_calls(const ApiCallsPlan& plan, const std::vector<RangeInstance>& nvtx) {
  if (plan.parts > 1) {
    // No slot a rowid here (slot_bytes 0): sparse rowids cost only a range of few rows.
    const Ranges ranges = plan_ranges(plan, std::max<std::uint64_t>(plan.parts * kRangesPerThread, plan.rows / kRangeRows), 0);
    if (!ranges.empty()) {
      if (auto calls = read_in_order_in_ranges(plan, ranges, nvtx)) return std::move(*calls);
    }
  }
  {
    auto db = plan.source.open_for_a_scan();
    auto stmt = db ? db->prepare(plan.sql) : Result<SqliteStatement>(db.error());
    if (!stmt) return ApiCallsBuilder(nvtx).from_rows(ApiRows{{}, {}, stmt.error()});
    auto scan = [&](const auto& emit) {
      std::uint64_t rows = 0;
      return read_api_rows(*stmt, nullptr, rows, emit);
    };
    if (auto calls = ApiCallsBuilder(nvtx).in_order(scan, plan.rows)) {
      if (stmt->error()) ApiCallsBuilder::set_error(*calls, make_error("", 0, *stmt->error()));
      return std::move(*calls);
    }
  }
  std::optional<ApiRows> rows;
  if (plan.parts > 1) {
    const Ranges ranges = plan_ranges(plan, plan.parts, sizeof(ApiRow));
    if (!ranges.empty()) rows = read_in_ranges(plan.source, plan.range_sql, ranges, plan.count);
  }
  return ApiCallsBuilder(nvtx).from_rows(rows ? std::move(*rows) : read_whole_table(plan.source, plan.sql, plan.rows));
}

}  // namespace

ApiCalls api_calls_of(const std::vector<ApiRow>& rows, const std::vector<RangeInstance>& ranges) {
  auto each = [&](const auto& emit) {
    return std::all_of(rows.begin(), rows.end(), [&](const ApiRow& r) { return emit(r); });
  };
  if (auto calls = ApiCallsBuilder(ranges).in_order(each, rows.size())) return std::move(*calls);
  ApiRows columns;
  for (const ApiRow& r : rows) {
    columns.calls.push_back(ApiCall{r.global_tid, r.start, r.end});
    columns.correlations.push_back(r.correlation);
  }
  return ApiCallsBuilder(ranges).from_rows(std::move(columns));
}

std::optional<ApiCalls> api_calls_kept_in_order(const std::vector<ApiRow>& rows, const std::vector<RangeInstance>& ranges,
                                                std::size_t stretch_rows) {
  ApiCallsBuilder builder(ranges);
  if (stretch_rows == 0) {
    auto each = [&](const auto& emit) { return std::all_of(rows.begin(), rows.end(), [&](const ApiRow& r) { return emit(r); }); };
    return builder.in_order(each, rows.size());
  }
  RangeRows stretch;
  for (std::size_t from = 0; from < rows.size(); from += stretch_rows) {
    const auto first = rows.begin() + static_cast<std::ptrdiff_t>(from);
    stretch.rows.assign(first, first + static_cast<std::ptrdiff_t>(std::min(stretch_rows, rows.size() - from)));
    stretch.whole = true;
    stretch.sweep(builder.enclosing());
    if (!add_range(builder, stretch)) return std::nullopt;
  }
  return builder.finish();
}

std::future<ApiCalls> start_reading_api_calls(Schema& schema, const DbSource& source,
                                              std::uint64_t file_bytes, unsigned threads,
                                              const std::vector<RangeInstance>& ranges, RowCount count,
                                              std::shared_ptr<const ThreadHandover> freed, CpuTally* cpu) {
  static constexpr std::array kColumns = {Column{"globalTid", true}, Column{"correlationId", true},
                                          Column{"start", true}, Column{"end", true}};
  if (!schema.has(kRuntime)) return std::async(std::launch::deferred, [] { return ApiCalls{}; });
  auto sql = schema.select_sql(kRuntime, kColumns);
  auto range_sql = schema.select_range_sql(kRuntime, kColumns);
  if (!sql || !range_sql) {
    return std::async(std::launch::deferred, [&ranges, e = sql ? range_sql.error() : sql.error()] {
      return ApiCallsBuilder(ranges).from_rows(ApiRows{{}, {}, e});
    });
  }
  ApiCallsPlan plan{source,
                    *sql,
                    *range_sql,
                    call_threads(threads),
                    file_bytes,
                    schema.row_estimate(kRuntime, file_bytes),
                    std::move(count),
                    threads - static_cast<unsigned>(call_threads(threads)),
                    std::move(freed),
                    cpu};
  auto policy = ChunkReader::worth_reading_ahead() ? std::launch::async : std::launch::deferred;
  return std::async(policy, [plan = std::move(plan), &ranges] {
    const CpuTally::Charge charge(plan.cpu);
    return read_api_calls(plan, ranges);
  });
}

RowCount begin_api_calls_count(const Schema& schema, const DbSource& source, unsigned threads, CpuTally* cpu) {
  if (!schema.has(kRuntime) || call_threads(threads) < 2) return {};
  return RowCount(source, std::string(kRuntime), cpu);
}

}  // namespace kernlens::ingest::nsys
