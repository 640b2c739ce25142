// Attributing GPU work to NVTX ranges the way Nsight Systems projects CPU ranges onto the GPU
// (its nvtx_gpu_proj_trace report): a kernel belongs to a range when the CUDA API call that
// launched it lies inside the range, on the thread where the range started. The result is
// a stage per call (the enclosing ranges) and, per range instance, its GPU extent: from the
// first start to the last end of the kernels it launched.
//
// Pure logic over plain vectors (no database), so that it is tested and timed on its own. In
// steps (EnclosingRanges, StageProjection) for a reader that keeps no list of its calls: an
// nsys export's million launch calls would be 24 MB more at its peak.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "kernlens/model/profile.h"

namespace kernlens::ingest {

// One CUDA API call that launched GPU work. `thread` is any id unique per thread of the trace.
struct ApiCall {
  std::int64_t thread;
  std::int64_t start_ns;
  std::int64_t end_ns;
};

// Of two calls with one correlation id (a runtime call and the driver call inside it), whether
// `call` is the inner one, the one any range enclosing the launch must contain: the later to
// start, then the first to end. Both timeline readers keep that one.
inline bool is_inner_call(const ApiCall& call, const ApiCall& than) {
  return call.start_ns > than.start_ns || (call.start_ns == than.start_ns && call.end_ns < than.end_ns);
}

// One NVTX range instance. A range that never ends may keep INT64_MAX as its end: it then
// encloses every later call of its thread, as it would ending with the trace.
struct RangeInstance {
  std::int64_t thread;  // where it started
  std::int64_t start_ns;
  std::int64_t end_ns;
  model::NvtxRange range;
};

// A kernel's time on the GPU and the call that launched it.
struct KernelSpan {
  std::uint32_t call;
  std::int64_t start_ns;
  std::int64_t end_ns;
};

// The ranges around one call: indices into the ranges, push/pop ranges first (outermost first:
// by start, the longer first on a tie), then start/end ranges by start.
using RangeSet = std::vector<std::uint32_t>;

// The calls' indices in (thread, start, end) order, ties in input order: the order
// EnclosingRanges takes calls in.
std::vector<std::uint32_t> sweep_order(const std::vector<ApiCall>& calls);

// The ranges enclosing each call, for calls that come in (start, end) order on each thread
// (threads may interleave). Per thread, a range that started before a call stays active until
// a call starts after its end; the active ranges that also end after the call's end enclose it.
class EnclosingRanges {
 public:
  explicit EnclosingRanges(const std::vector<RangeInstance>& ranges);  // must outlive this
  EnclosingRanges(const EnclosingRanges&) = delete;  // the index points at the sets
  EnclosingRanges& operator=(const EnclosingRanges&) = delete;
  // Another sweep over the same ranges, from the start, sharing their order: for a stretch of
  // calls that comes in order on each thread, as every stretch of calls that do (a call's set
  // is the thread's ranges that start by its start and end at or after its start and its end,
  // whatever came before).
  std::unique_ptr<EnclosingRanges> fresh() const;

  // The call's set: an index into sets() (0: no range). nullopt when the call comes before
  // the previous call of its thread in (start, end) order: the sweep only moves forward.
  std::optional<std::uint32_t> set_of(const ApiCall& call);
  // set_of's check alone, for a call whose set another sweep found: false when the call comes
  // before the previous call of its thread in (start, end) order.
  bool in_order(const ApiCall& call);
  // The same for the calls of one thread from `first` to `last`, in order between them.
  bool in_order(const ApiCall& first, const ApiCall& last);
  // The index of `set` among the sets, added when new.
  std::uint32_t intern(const RangeSet& set);
  // The same for a set whose hash_of another thread worked out, moved in when new: the one
  // thread that builds the calls read in ranges interns every range's sets, and copying and
  // hashing them was a third of its work.
  std::uint32_t intern(RangeSet&& set, std::size_t hash);
  static std::size_t hash_of(const RangeSet& set);
  const std::vector<RangeSet>& sets() const { return sets_; }
  // The sets, after the last call.
  std::vector<RangeSet> take_sets() {
    index_ = {};
    hashes_ = {};
    return std::move(sets_);
  }

 private:
  struct Thread {
    std::int64_t id;
    std::size_t next, end;              // the thread's ranges not yet started: order_->ranges[next, end)
    std::vector<std::uint32_t> active;  // started, and not yet known to have ended
    RangeSet current;                   // the set of the thread's last call, and its index
    std::uint32_t current_id = 0;
    bool seen = false;
    std::int64_t last_start = 0, last_end = 0;
  };
  // The ranges by (thread, start, longer first), and the latest end of each block of
  // kBlock of them in that order: a sweep passes over a block of ranges that all ended
  // before a call at once (a fresh sweep's first call of a thread meets every range before it).
  struct Order {
    static constexpr std::size_t kBlock = 64;
    std::vector<std::uint32_t> ranges;
    std::vector<std::int64_t> block_latest_end;
  };
  EnclosingRanges(const std::vector<RangeInstance>& ranges, std::shared_ptr<const Order> order);
  static std::shared_ptr<const Order> order_of(const std::vector<RangeInstance>& ranges);
  Thread& thread(std::int64_t id);
  bool moves_forward(Thread& t, const ApiCall& call);

  const std::vector<RangeInstance>& ranges_;
  std::shared_ptr<const Order> order_;
  std::vector<Thread> threads_;
  std::size_t last_thread_ = 0;
  // Distinct sets, each held once, found through an open-addressing table of their indices + 1
  // (0: a free slot), at most half full. A node a set (std::unordered_set) took 25,000
  // allocations in a million kernels' export, freed one by one at the end of the calls' read,
  // which the read waits for; and each lookup copied its set to compare it.
  std::size_t slot_of(std::size_t hash) const { return hash >> (64 - index_bits_); }
  void grow_index();
  template <class Set>
  std::uint32_t intern_hashed(Set&& set, std::size_t hash);
  std::vector<RangeSet> sets_{RangeSet{}};
  std::vector<std::size_t> hashes_{hash_of(RangeSet{})};  // by set: kept for grow_index
  std::vector<std::uint32_t> index_;
  unsigned index_bits_ = 0;
  RangeSet scratch_;
};

// The stages of the sets that launched work and the GPU extent of each range instance. Stage
// ids come in one order whatever order the work is added in: sets by their first call in
// (thread, start, end) order, then the range instances of which no set is the whole path, by
// their first kernel.
class StageProjection {
 public:
  StageProjection(const std::vector<RangeInstance>& ranges, std::vector<RangeSet> sets);  // ranges must outlive this

  // A call in set `set` on `thread` launched work; `rank` orders the calls of a thread by
  // (start, end).
  void add_call(std::uint32_t set, std::int64_t thread, std::uint64_t rank);
  // A kernel launched by a call in set `set` widens the extent of each range of the set;
  // `order` orders the kernels (the first kernel of an instance names its stage first).
  void add_kernel(std::uint32_t set, std::uint64_t order, std::int64_t start_ns, std::int64_t end_ns);
  // Labels the range instances (their names and kinds, numbered as they first come) on up to
  // `threads` threads: finish needs them, and they depend on the ranges only, so a reader can
  // label them early, beside other work. finish labels them where this was not called.
  void label_ranges(unsigned threads);
  // Interns the stages and appends a StageRange per range instance that launched a kernel;
  // the stage of each set. The paths are looked up on up to `threads` threads; the stages are
  // the same on any number.
  std::vector<model::StageId> finish(model::Profile& profile, unsigned threads = 1);

 private:
  std::vector<std::uint32_t> sets_by_first_use() const;       // the sets that launched work
  std::vector<std::uint32_t> ranges_by_first_kernel() const;  // the range instances that launched kernels
  struct FirstUse {
    std::int64_t thread = INT64_MAX;
    std::uint64_t rank = UINT64_MAX;
  };
  struct Extent {
    std::int64_t start = INT64_MAX, end = INT64_MIN;
    std::uint64_t first_order = UINT64_MAX;  // the first kernel's order, and where its set put this range
    std::uint32_t first_set = 0, first_at = 0;
  };

  const std::vector<RangeInstance>& ranges_;
  std::vector<RangeSet> sets_;
  std::vector<FirstUse> first_use_;  // per set
  std::vector<Extent> extents_;      // per range instance
  std::optional<std::vector<std::uint32_t>> labels_;  // per range instance (label_ranges)
};

// The whole projection over lists: the stage of each call (keyed by the instance's own path:
// its enclosing push/pop ranges and itself, or a start/end range alone, for the StageRanges).
std::vector<model::StageId> project_nvtx(const std::vector<ApiCall>& calls,
                                         const std::vector<RangeInstance>& ranges,
                                         const std::vector<KernelSpan>& kernels,
                                         model::Profile& profile);

}  // namespace kernlens::ingest
