// The CUDA API call of each GPU operation of an nsys export: the CUPTI_ACTIVITY_KIND_RUNTIME
// row with the operation's process and correlation id. Internal to ingest/nsys.
#pragma once

#include <cstdint>
#include <future>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kernlens/common/sqlite_db.h"
#include "kernlens/ingest/timeline/nvtx_projection.h"

namespace kernlens::ingest::nsys {

// A CUDA API call as the export records it.
struct ApiRow {
  std::int64_t global_tid, correlation, start, end;
};

// A GPU operation (index into profile.launches) or an API call (index into the rows read),
// with its call key: (process, correlation id) as one number, to sort and merge on. Packed to
// 12 bytes: a million-kernel export holds one per operation at the reader's peak.
#pragma pack(push, 4)
struct Keyed {
  std::uint64_t key;
  std::uint32_t index;
};
#pragma pack(pop)
static_assert(sizeof(Keyed) == 12);

// The API calls read, in two columns: the calls (`thread`: the globalTid) and their
// correlation ids, which matching drops while the matched calls close up in place; or the
// error that stopped reading them. Not a Result: GCC 12 takes a Result destroyed inside
// std::future's task setter for a free of a stack object (-Wfree-nonheap-object, a false
// positive that -Werror turns into a failed build).
struct ApiRows {
  std::vector<ApiCall> calls;
  std::vector<std::int64_t> correlations;
  std::optional<Error> error;

  void add(const ApiRow& r) {
    calls.push_back(ApiCall{r.global_tid, r.start, r.end});
    correlations.push_back(r.correlation);
  }
};

class Schema;
struct DbSource;

// The CUDA API calls (globalTid, correlationId, start, end), read on a connection of their own
// and on another CPU when there is one (in rowid ranges on several with `threads` of 3 and
// more): the table is about as long as the kernel table and independent of it. No rows when
// the export has no runtime table.
std::future<ApiRows> start_reading_api_rows(Schema& schema, const DbSource& source,
                                            std::uint64_t file_bytes, unsigned threads);

class CallMatcher {
 public:
  static constexpr std::uint32_t kNoCall = std::numeric_limits<std::uint32_t>::max();

  // Processes are few and CUPTI's correlation ids 32-bit: (process, correlation id) fits one
  // 64-bit key, and sorting keys is several times cheaper than sorting the rows. nullopt for a
  // correlation id out of range.
  std::optional<std::uint64_t> key(std::int64_t global_id, std::int64_t correlation);

  // Matches the operations `ops` (sorted here by key) with the API calls `rows`, whose storage
  // becomes calls(), and replaces each operation's key by its call: an index into calls(), or
  // kNoCall (in place: a list beside them would be 4 bytes an operation more at the peak). A
  // launch recorded twice (cudaLaunchKernel wrapping cudaLaunchKernel_v7000 on the same
  // thread) keeps the inner call, the one any enclosing range must contain.
  void match(ApiRows rows, std::vector<Keyed>& ops);

  const std::vector<ApiCall>& calls() const { return calls_; }

 private:
  // Whether every row has a key and the keys never fall: then the rows need no sorted index
  // (16 bytes a row) and the calls close up in place. Numbers the rows' processes.
  bool keyed_in_order(const ApiRows& rows);
  // The operations' calls, from the n rows in key order that key_at(j) and row_at(j) give,
  // into out[0..) (out may be the rows themselves when row_at(j) is out[j]); their count.
  template <class KeyAt, class RowAt>
  std::size_t merge(std::vector<Keyed>& ops, std::size_t n, const KeyAt& key_at,
                    const RowAt& row_at, std::vector<ApiCall>& out);

  std::vector<std::int64_t> process_keys_;  // call keys number the processes in first-seen order
  std::size_t last_process_ = 0;            // the index key() found last
  std::vector<ApiCall> calls_;
};

}  // namespace kernlens::ingest::nsys
