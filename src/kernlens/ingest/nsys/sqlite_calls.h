// The CUDA API call of each GPU operation of an nsys export: the CUPTI_ACTIVITY_KIND_RUNTIME
// row with the operation's process and correlation id, kept as no more than what attribution
// needs (the call's thread and the NVTX ranges around it). Internal to ingest/nsys.
#pragma once

#include <cstdint>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernlens/common/parallel_chunks.h"
#include "kernlens/common/sqlite_db.h"
#include "kernlens/ingest/nsys/sqlite_schema.h"
#include "kernlens/ingest/timeline/nvtx_projection.h"

namespace kernlens::ingest::nsys {

// A CUDA API call as the export records it.
struct ApiRow {
  std::int64_t global_tid, correlation, start, end;
};

// Where a call was made: its thread (the globalTid) and the set of NVTX ranges around it
// (EnclosingRanges).
struct CallPlace {
  std::int64_t thread;
  std::uint32_t set;
  bool operator==(const CallPlace&) const = default;
};
struct CallPlaceHash {
  std::size_t operator()(const CallPlace& p) const { return std::hash<std::int64_t>()(p.thread) * 31 + p.set; }
};

// Numbers for distinct values in the order they first come, the last value's tried first
// (calls come in runs of one process and one place).
template <class T, class Hash = std::hash<T>>
class FirstComeNumbers {
 public:
  std::uint32_t number(const T& value) {
    if (!values_.empty() && values_[last_] == value) return last_;
    auto [it, is_new] = index_.try_emplace(value, static_cast<std::uint32_t>(values_.size()));
    if (is_new) values_.push_back(value);
    return last_ = it->second;
  }
  const std::vector<T>& values() const { return values_; }
  std::vector<T> take() {
    index_.clear();
    last_ = 0;
    return std::move(values_);
  }
  void clear() {  // keeps the room, for the next stretch of calls
    values_.clear();
    index_.clear();
    last_ = 0;
  }

 private:
  std::vector<T> values_;
  std::unordered_map<T, std::uint32_t, Hash> index_;
  std::uint32_t last_ = 0;
};

// The API calls of an export by call key, (process, correlation id) as one number: processes
// are few and CUPTI's correlation ids 32-bit, and 8 bytes a key are kept where the calls'
// rows are 32. A launch recorded twice (cudaLaunchKernel wrapping cudaLaunchKernel_v7000 on
// the same thread) keeps the inner call, the one any enclosing range must contain.
class ApiCalls {
 public:
  static constexpr std::uint32_t kNoCall = std::numeric_limits<std::uint32_t>::max();

  // Where a search left off. Operations mostly come in key order: the entry after the last one
  // found is tried first. Searches with cursors of their own may run on several threads.
  struct Cursor {
    std::size_t process = 0;
    std::uint32_t found = 0;
  };
  // The entry of the call with the operation's process (any global id of it) and correlation
  // id: nullopt when the pair has no key (a correlation id beyond 32 bits), kNoCall when no
  // call has it.
  std::optional<std::uint32_t> find(std::int64_t global_id, std::int64_t correlation, Cursor& cursor) const;
  // Whether a call with this correlation id has a key (kept; else passed over).
  static bool has_key(std::int64_t correlation) {
    return correlation >= 0 && correlation <= std::numeric_limits<std::uint32_t>::max();
  }
  std::optional<std::uint32_t> find(std::int64_t global_id, std::int64_t correlation) {
    return find(global_id, correlation, cursor_);
  }
  const CallPlace& place(std::uint32_t entry) const { return places_[place_of_[entry]]; }
  std::uint32_t place_index(std::uint32_t entry) const { return place_of_[entry]; }
  const std::vector<CallPlace>& places() const { return places_; }
  // The entry's place among the calls of its thread in (start, end) order.
  std::uint64_t rank(std::uint32_t entry) const { return ranks_.empty() ? entry : ranks_[entry]; }
  std::uint64_t key_of(std::uint32_t entry) const;
  std::size_t size() const { return correlations_.size(); }  // the entries
  std::vector<RangeSet> take_sets() { return std::move(sets_); }
  std::int64_t latest_end_ns() const { return latest_end_ns_; }
  const std::optional<Error>& error() const { return error_; }
  // Whether the calls were kept as they came (else the rows were read whole and sorted).
  bool kept_in_order() const { return ranks_.empty(); }

 private:
  friend class ApiCallsBuilder;
  // The last entry's key; a new entry, whose key must not be below it.
  std::optional<std::uint64_t> last_key() const;
  void append(std::uint64_t key);

  // The keys, rising, as 4 bytes each: the correlation ids, and where each process's run ends
  // (the entries of process number p are [process_end_[p - 1], process_end_[p])).
  std::vector<std::uint32_t> correlations_;
  std::vector<std::uint32_t> process_end_;
  std::vector<std::uint32_t> place_of_;  // per key: index into places_
  std::vector<std::uint32_t> ranks_;     // per key; empty when keys are in (start, end) order on each thread
  std::vector<CallPlace> places_;        // distinct
  std::vector<RangeSet> sets_{RangeSet{}};
  std::vector<std::int64_t> processes_;  // the process of each key's process number
  Cursor cursor_;  // find's without one
  std::int64_t latest_end_ns_ = std::numeric_limits<std::int64_t>::min();
  std::optional<Error> error_;
};


// The CUDA API calls (globalTid, correlationId, start, end), read on connections of their own
// and on other CPUs when there are: the table is about as long as the kernel table and
// independent of it. `ranges` (which must outlive the future) are the export's NVTX ranges.
// Each call is kept as it comes when the rows come in key order and in time order on each
// thread (every nsys export we have): with `threads` of 3 and more the rows are read in rowid
// ranges on half of them and handed to one builder in rowid order, else in one scan; calls
// out of order are read whole (in rowid ranges likewise) and sorted. No calls when the export
// has no runtime table.
// `count`: begin_api_calls_count's, begun before; a read in ranges without one is not trusted
// and reads the table again in one scan.
// `freed`: hands over the read's other threads as each is free (its kernel rows read); a read
// in ranges, on half the threads before, takes each then (where set).
// `cpu`: charged with the read's CPU on every thread it runs on (where set; --verbose).
std::future<ApiCalls> start_reading_api_calls(Schema& schema, const DbSource& source,
                                              std::uint64_t file_bytes, unsigned threads,
                                              const std::vector<RangeInstance>& ranges, RowCount count,
                                              std::shared_ptr<const ThreadHandover> freed = {},
                                              CpuTally* cpu = nullptr);

// The count of the runtime table's rows that start_reading_api_calls with `threads` checks a
// read in rowid ranges against, begun now; none where it reads in one scan. Its CPU goes to
// `cpu` where set.
RowCount begin_api_calls_count(const Schema& schema, const DbSource& source, unsigned threads,
                               CpuTally* cpu = nullptr);

// The calls of `rows`, a runtime table's rows in rowid order, as start_reading_api_calls keeps
// them (the rows with both ids; for tests).
ApiCalls api_calls_of(const std::vector<ApiRow>& rows, const std::vector<RangeInstance>& ranges);
// The calls of `rows` kept as they come, as a read in rowid ranges of `stretch_rows` rows keeps
// them (0: one row at a time, as one scan does); nullopt when they are not in order (for tests).
std::optional<ApiCalls> api_calls_kept_in_order(const std::vector<ApiRow>& rows, const std::vector<RangeInstance>& ranges,
                                                std::size_t stretch_rows);

}  // namespace kernlens::ingest::nsys
