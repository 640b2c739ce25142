#include "kernlens/ingest/timeline/nvtx_projection.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

namespace kernlens::ingest {

using RangeSet = std::vector<std::uint32_t>;  // indices into the ranges, in StageKey order

// Every call's enclosing ranges as an index into a list of distinct sets (set 0 is empty).
// Outside the anonymous namespace: NvtxProjection::State holds one, and a member of a class
// with linkage must have a type with linkage too.
struct NvtxEnclosingSets {
  std::vector<std::uint32_t> set_of_call;
  std::vector<RangeSet> sets{RangeSet{}};
};

namespace {

bool is_push_pop(const RangeInstance& r) {
  return r.range.kind == model::RangeKind::kPushPop;
}

// Indices of `items` in `less` order (ties in input order). Calls usually come in time order
// already: checking costs a pass, sorting a million indices ten.
template <class T, class Less>
std::vector<std::uint32_t> order_by(const std::vector<T>& items, Less less) {
  std::vector<std::uint32_t> order(items.size());
  std::iota(order.begin(), order.end(), 0u);
  auto by = [&](std::uint32_t a, std::uint32_t b) {
    return less(items[a], items[b]) || (!less(items[b], items[a]) && a < b);
  };
  if (!std::is_sorted(order.begin(), order.end(), by)) std::sort(order.begin(), order.end(), by);
  return order;
}

class Sweep {
 public:
  Sweep(const std::vector<ApiCall>& calls, const std::vector<RangeInstance>& ranges)
      : calls_(calls), ranges_(ranges) {
    out_.set_of_call.assign(calls.size(), 0);
    index_.emplace(RangeSet{}, 0);
  }

  // Per thread, calls and ranges both in start order: a range that started before a call
  // is kept active until a call starts after its end; the active ranges that also end after
  // the call's end enclose it.
  NvtxEnclosingSets run() {
    auto calls_order = order_by(calls_, [](const ApiCall& a, const ApiCall& b) {
      return std::tie(a.thread, a.start_ns, a.end_ns) < std::tie(b.thread, b.start_ns, b.end_ns);
    });
    // On equal starts the longer range first: an enclosing range precedes what it encloses.
    auto ranges_order = order_by(ranges_, [](const RangeInstance& a, const RangeInstance& b) {
      return std::tie(a.thread, a.start_ns, b.end_ns) < std::tie(b.thread, b.start_ns, a.end_ns);
    });
    std::size_t r = 0;
    for (std::size_t i = 0; i < calls_order.size();) {
      const std::int64_t thread = calls_[calls_order[i]].thread;
      while (r < ranges_order.size() && ranges_[ranges_order[r]].thread < thread) ++r;
      active_.clear();
      current_.clear();
      std::uint32_t current_id = 0;
      for (; i < calls_order.size() && calls_[calls_order[i]].thread == thread; ++i) {
        const ApiCall& call = calls_[calls_order[i]];
        while (r < ranges_order.size() && ranges_[ranges_order[r]].thread == thread &&
               ranges_[ranges_order[r]].start_ns <= call.start_ns) {
          active_.push_back(ranges_order[r++]);
        }
        std::erase_if(active_, [&](std::uint32_t a) { return ranges_[a].end_ns < call.start_ns; });
        enclosing(call, scratch_);
        if (scratch_ != current_) {
          current_.swap(scratch_);
          current_id = intern(current_);
        }
        out_.set_of_call[calls_order[i]] = current_id;
      }
    }
    return std::move(out_);
  }

 private:
  void enclosing(const ApiCall& call, RangeSet& set) const {
    set.clear();
    for (std::uint32_t a : active_) {
      if (ranges_[a].end_ns >= call.end_ns) set.push_back(a);
    }
    std::stable_partition(set.begin(), set.end(),
                          [&](std::uint32_t a) { return is_push_pop(ranges_[a]); });
  }

  std::uint32_t intern(const RangeSet& set) {
    auto [it, is_new] = index_.try_emplace(set, static_cast<std::uint32_t>(out_.sets.size()));
    if (is_new) out_.sets.push_back(set);
    return it->second;
  }

  const std::vector<ApiCall>& calls_;
  const std::vector<RangeInstance>& ranges_;
  NvtxEnclosingSets out_;
  std::map<RangeSet, std::uint32_t> index_;
  std::vector<std::uint32_t> active_;  // ranges started and not yet known to have ended
  RangeSet current_, scratch_;
};

model::StageKey key_of(const std::vector<RangeInstance>& ranges, const RangeSet& set,
                       std::size_t count) {
  model::StageKey key;
  for (std::size_t i = 0; i < count; ++i) {
    const RangeInstance& r = ranges[set[i]];
    (is_push_pop(r) ? key.push_pop : key.start_end).push_back(r.range);
  }
  return key;
}

// The key of one range instance: its enclosing push/pop ranges and itself (push/pop ranges
// come first in a set, outermost first), or a start/end range alone.
model::StageKey instance_key(const std::vector<RangeInstance>& ranges, const RangeSet& set,
                             std::size_t at) {
  if (is_push_pop(ranges[set[at]])) return key_of(ranges, set, at + 1);
  model::StageKey key;
  key.start_end.push_back(ranges[set[at]].range);
  return key;
}

constexpr model::StageId kNoStage = std::numeric_limits<model::StageId>::max();

}  // namespace

struct NvtxProjection::State {
  struct Extent {
    std::int64_t start = std::numeric_limits<std::int64_t>::max();
    std::int64_t end = std::numeric_limits<std::int64_t>::min();
    model::StageId stage = kNoStage;
  };

  const std::vector<ApiCall>& calls;
  const std::vector<RangeInstance>& ranges;
  model::Profile& profile;
  NvtxEnclosingSets enc;
  std::vector<model::StageId> stage_of_set;
  std::vector<Extent> extents;
};

NvtxProjection::NvtxProjection(const std::vector<ApiCall>& calls,
                               const std::vector<RangeInstance>& ranges, model::Profile& profile)
    : state_(new State{calls, ranges, profile, Sweep(calls, ranges).run(), {}, {}}) {
  State& s = *state_;
  // The sets' stages first: stage ids follow the order project_nvtx always interned them in.
  s.stage_of_set.resize(s.enc.sets.size());
  for (std::size_t i = 0; i < s.enc.sets.size(); ++i) {
    s.stage_of_set[i] = profile.intern_stage(key_of(ranges, s.enc.sets[i], s.enc.sets[i].size()));
  }
  s.extents.resize(ranges.size());
}

NvtxProjection::~NvtxProjection() = default;

void NvtxProjection::add_kernel(const KernelSpan& k) {
  State& s = *state_;
  if (k.call >= s.calls.size()) return;
  const RangeSet& set = s.enc.sets[s.enc.set_of_call[k.call]];
  for (std::size_t at = 0; at < set.size(); ++at) {
    State::Extent& e = s.extents[set[at]];
    if (e.stage == kNoStage) e.stage = s.profile.intern_stage(instance_key(s.ranges, set, at));
    e.start = std::min(e.start, k.start_ns);
    e.end = std::max(e.end, k.end_ns);
  }
}

std::vector<model::StageId> NvtxProjection::finish() {
  State& s = *state_;
  for (const State::Extent& e : s.extents) {
    if (e.stage != kNoStage)
      s.profile.stage_ranges.push_back(model::StageRange{e.stage, e.start, e.end, 0});
  }
  std::vector<model::StageId> stage_of_call(s.calls.size());
  for (std::size_t c = 0; c < s.calls.size(); ++c)
    stage_of_call[c] = s.stage_of_set[s.enc.set_of_call[c]];
  return stage_of_call;
}

std::vector<model::StageId> project_nvtx(const std::vector<ApiCall>& calls,
                                         const std::vector<RangeInstance>& ranges,
                                         const std::vector<KernelSpan>& kernels,
                                         model::Profile& profile) {
  NvtxProjection projection(calls, ranges, profile);
  for (const KernelSpan& k : kernels) projection.add_kernel(k);
  return projection.finish();
}

}  // namespace kernlens::ingest
