#include "kernlens/ingest/timeline/nvtx_projection.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <tuple>

#include "kernlens/common/parallel_chunks.h"

namespace kernlens::ingest {
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

// The ranges' labels (domain, name, kind) as numbers, equal where the labels are: a path of
// labels stands for a stage key. A key and its text built for each set and range instance (every
// step's "layer0" again) was most of an export's stages step.
struct LabelHash {
  std::size_t operator()(const model::NvtxRange* r) const {
    return std::hash<std::string_view>()(r->name) * 31 + std::hash<std::string_view>()(r->domain) + static_cast<std::size_t>(r->kind);
  }
};
struct LabelEqual {
  bool operator()(const model::NvtxRange* a, const model::NvtxRange* b) const { return *a == *b; }
};
std::vector<std::uint32_t> labels_of(const std::vector<RangeInstance>& ranges, unsigned threads) {
  return number_first_come_in_parallel<const model::NvtxRange*, LabelHash, LabelEqual>(
             ranges.size(), threads, [&](std::size_t i, const model::NvtxRange*& key) { key = &ranges[i].range; })
      .of_item;
}

struct PathHash {  // a path of labels is a vector of numbers, as a set of ranges is
  std::size_t operator()(const std::vector<std::uint32_t>& path) const { return EnclosingRanges::hash_of(path); }
};

}  // namespace

std::vector<std::uint32_t> sweep_order(const std::vector<ApiCall>& calls) {
  return order_by(calls, [](const ApiCall& a, const ApiCall& b) {
    return std::tie(a.thread, a.start_ns, a.end_ns) < std::tie(b.thread, b.start_ns, b.end_ns);
  });
}

std::shared_ptr<const EnclosingRanges::Order> EnclosingRanges::order_of(const std::vector<RangeInstance>& ranges) {
  auto order = std::make_shared<Order>();
  // On equal starts the longer range first: an enclosing range precedes what it encloses.
  order->ranges = order_by(ranges, [](const RangeInstance& a, const RangeInstance& b) {
    return std::tie(a.thread, a.start_ns, b.end_ns) < std::tie(b.thread, b.start_ns, a.end_ns);
  });
  for (std::size_t i = 0; i < order->ranges.size(); ++i) {
    if (i % Order::kBlock == 0) order->block_latest_end.push_back(INT64_MIN);
    order->block_latest_end.back() = std::max(order->block_latest_end.back(), ranges[order->ranges[i]].end_ns);
  }
  return order;
}

EnclosingRanges::EnclosingRanges(const std::vector<RangeInstance>& ranges) : EnclosingRanges(ranges, order_of(ranges)) {}

EnclosingRanges::EnclosingRanges(const std::vector<RangeInstance>& ranges, std::shared_ptr<const Order> order)
    : ranges_(ranges), order_(std::move(order)) {
  grow_index();  // the empty set, sets_[0], indexed
}

std::unique_ptr<EnclosingRanges> EnclosingRanges::fresh() const {
  return std::unique_ptr<EnclosingRanges>(new EnclosingRanges(ranges_, order_));
}

static_assert(sizeof(std::size_t) == 8, "slot_of takes the high bits of a 64-bit hash");

std::size_t EnclosingRanges::hash_of(const RangeSet& set) {
  std::uint64_t h = set.size();
  for (std::uint32_t r : set) h = h * 1000003 + r;
  return static_cast<std::size_t>(h * 0x9E3779B97F4A7C15ULL);  // slot_of takes the high bits
}

EnclosingRanges::Thread& EnclosingRanges::thread(std::int64_t id) {
  if (last_thread_ < threads_.size() && threads_[last_thread_].id == id) return threads_[last_thread_];
  auto it = std::find_if(threads_.begin(), threads_.end(), [&](const Thread& t) { return t.id == id; });
  if (it == threads_.end()) {
    const std::vector<std::uint32_t>& order = order_->ranges;
    auto first = std::partition_point(order.begin(), order.end(), [&](std::uint32_t r) { return ranges_[r].thread < id; });
    auto last = std::partition_point(first, order.end(), [&](std::uint32_t r) { return ranges_[r].thread <= id; });
    threads_.push_back(Thread{id, static_cast<std::size_t>(first - order.begin()),
                              static_cast<std::size_t>(last - order.begin()), {}, {}, 0, false, 0, 0});
    it = threads_.end() - 1;
  }
  last_thread_ = static_cast<std::size_t>(it - threads_.begin());
  return *it;
}

bool EnclosingRanges::moves_forward(Thread& t, const ApiCall& call) {
  if (t.seen && std::tie(call.start_ns, call.end_ns) < std::tie(t.last_start, t.last_end)) return false;
  t.seen = true;
  t.last_start = call.start_ns;
  t.last_end = call.end_ns;
  return true;
}

bool EnclosingRanges::in_order(const ApiCall& call) { return moves_forward(thread(call.thread), call); }

bool EnclosingRanges::in_order(const ApiCall& first, const ApiCall& last) {
  Thread& t = thread(first.thread);
  return moves_forward(t, first) && moves_forward(t, last);
}

std::optional<std::uint32_t> EnclosingRanges::set_of(const ApiCall& call) {
  Thread& t = thread(call.thread);
  if (!moves_forward(t, call)) return std::nullopt;
  const std::vector<std::uint32_t>& order = order_->ranges;
  constexpr std::size_t kBlock = Order::kBlock;
  while (t.next < t.end && ranges_[order[t.next]].start_ns <= call.start_ns) {
    // A whole block of the thread's ranges that started by the call and ended before it starts
    // would be pushed and erased below.
    if (t.next % kBlock == 0 && t.next + kBlock <= t.end && order_->block_latest_end[t.next / kBlock] < call.start_ns &&
        ranges_[order[t.next + kBlock - 1]].start_ns <= call.start_ns) {
      t.next += kBlock;
      continue;
    }
    t.active.push_back(order[t.next++]);
  }
  std::erase_if(t.active, [&](std::uint32_t a) { return ranges_[a].end_ns < call.start_ns; });
  scratch_.clear();
  for (std::uint32_t a : t.active) {
    if (ranges_[a].end_ns >= call.end_ns) scratch_.push_back(a);
  }
  std::stable_partition(scratch_.begin(), scratch_.end(), [&](std::uint32_t a) { return is_push_pop(ranges_[a]); });
  if (scratch_ != t.current) {
    t.current.swap(scratch_);
    t.current_id = intern(t.current);
  }
  return t.current_id;
}

std::uint32_t EnclosingRanges::intern(const RangeSet& set) { return intern_hashed(set, hash_of(set)); }

std::uint32_t EnclosingRanges::intern(RangeSet&& set, std::size_t hash) { return intern_hashed(std::move(set), hash); }

template <class Set>
std::uint32_t EnclosingRanges::intern_hashed(Set&& set, std::size_t hash) {
  if ((sets_.size() + 1) * 2 > index_.size()) grow_index();  // at most half full with a new one
  const std::size_t mask = index_.size() - 1;
  for (std::size_t i = slot_of(hash);; i = (i + 1) & mask) {
    if (index_[i] == 0) {
      sets_.push_back(std::forward<Set>(set));
      hashes_.push_back(hash);
      index_[i] = static_cast<std::uint32_t>(sets_.size());
      return static_cast<std::uint32_t>(sets_.size() - 1);
    }
    if (hashes_[index_[i] - 1] == hash && sets_[index_[i] - 1] == set) return index_[i] - 1;
  }
}

// Twice the slots (at least 16), every set placed again.
void EnclosingRanges::grow_index() {
  index_bits_ = std::max(4u, index_bits_ + 1);
  index_.assign(std::size_t{1} << index_bits_, 0);
  const std::size_t mask = index_.size() - 1;
  for (std::uint32_t id = 0; id < sets_.size(); ++id) {
    std::size_t i = slot_of(hashes_[id]);
    while (index_[i] != 0) i = (i + 1) & mask;
    index_[i] = id + 1;
  }
}

StageProjection::StageProjection(const std::vector<RangeInstance>& ranges, std::vector<RangeSet> sets)
    : ranges_(ranges), sets_(std::move(sets)), first_use_(sets_.size()), extents_(ranges.size()) {}

void StageProjection::add_call(std::uint32_t set, std::int64_t thread, std::uint64_t rank) {
  FirstUse& f = first_use_[set];
  if (std::tie(thread, rank) < std::tie(f.thread, f.rank)) f = FirstUse{thread, rank};
}

void StageProjection::add_kernel(std::uint32_t set, std::uint64_t order, std::int64_t start_ns, std::int64_t end_ns) {
  const RangeSet& ranges = sets_[set];
  for (std::uint32_t at = 0; at < ranges.size(); ++at) {
    Extent& e = extents_[ranges[at]];
    e.start = std::min(e.start, start_ns);
    e.end = std::max(e.end, end_ns);
    if (std::tie(order, at) < std::tie(e.first_order, e.first_at)) {
      e.first_order = order;
      e.first_set = set;
      e.first_at = at;
    }
  }
}

// The sets mostly come in their first use's order already, and so do the ranges in their first
// kernel's: sorting them anyway was a fifth of the stages step (25,000 sets and 28,000 ranges in
// a million kernels' export).
std::vector<std::uint32_t> StageProjection::sets_by_first_use() const {
  std::vector<std::uint32_t> used;
  for (std::uint32_t s = 1; s < sets_.size(); ++s) {
    if (first_use_[s].rank != UINT64_MAX) used.push_back(s);
  }
  auto by_first_use = [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(first_use_[a].thread, first_use_[a].rank) < std::tie(first_use_[b].thread, first_use_[b].rank);
  };
  if (!std::is_sorted(used.begin(), used.end(), by_first_use)) std::sort(used.begin(), used.end(), by_first_use);
  return used;
}

std::vector<std::uint32_t> StageProjection::ranges_by_first_kernel() const {
  std::vector<std::uint32_t> hit;
  for (std::uint32_t r = 0; r < extents_.size(); ++r) {
    if (extents_[r].first_order != UINT64_MAX) hit.push_back(r);
  }
  auto first_kernel = [&](std::uint32_t r) { return std::tie(extents_[r].first_order, extents_[r].first_at); };
  auto by_first_kernel = [&](std::uint32_t a, std::uint32_t b) { return first_kernel(a) < first_kernel(b); };
  if (!std::is_sorted(hit.begin(), hit.end(), by_first_kernel)) std::stable_sort(hit.begin(), hit.end(), by_first_kernel);
  return hit;
}

void StageProjection::label_ranges(unsigned threads) { labels_ = labels_of(ranges_, threads); }

std::vector<model::StageId> StageProjection::finish(model::Profile& profile, unsigned threads) {
  std::vector<model::StageId> stage_of_set(sets_.size(), 0);
  stage_of_set[0] = profile.intern_stage(model::StageKey{});
  std::vector<std::uint32_t> used, hit;  // two passes of one thread each (2-3 ms at 8 M launches)
  const auto find_used = [&] { used = sets_by_first_use(); };
  const auto find_hit = [&] { hit = ranges_by_first_kernel(); };
  if (threads > 1) {
    run_side_by_side(find_used, find_hit);
  } else {
    find_used();
    find_hit();
  }
  // The used sets' whole paths, then the range instances' own (key_of, instance_key), as labels:
  // a stage for each distinct path, interned in the order the paths first come.
  if (!labels_) label_ranges(threads);
  const std::vector<std::uint32_t>& label = *labels_;
  auto instance = [&](std::size_t j) { return std::pair<const RangeSet&, std::uint32_t>{sets_[extents_[hit[j]].first_set], extents_[hit[j]].first_at}; };
  const FirstComeIds paths = number_first_come_in_parallel<std::vector<std::uint32_t>, PathHash>(
      used.size() + hit.size(), threads, [&](std::size_t i, std::vector<std::uint32_t>& path) {
        path.clear();
        if (i < used.size()) {
          for (std::uint32_t r : sets_[used[i]]) path.push_back(label[r]);
          return;
        }
        const auto [set, at] = instance(i - used.size());
        if (is_push_pop(ranges_[set[at]])) {  // its enclosing push/pop ranges and itself
          for (std::uint32_t k = 0; k <= at; ++k) path.push_back(label[set[k]]);
        } else {  // a start/end range alone
          path.push_back(label[set[at]]);
        }
      });
  std::vector<model::StageId> stage_of_path;
  for (std::size_t i : paths.first_item) {
    if (i < used.size()) {
      stage_of_path.push_back(profile.intern_stage(key_of(ranges_, sets_[used[i]], sets_[used[i]].size())));
    } else {
      const auto [set, at] = instance(i - used.size());
      stage_of_path.push_back(profile.intern_stage(instance_key(ranges_, set, at)));
    }
  }
  for (std::size_t i = 0; i < used.size(); ++i) stage_of_set[used[i]] = stage_of_path[paths.of_item[i]];
  std::vector<model::StageId> stage_of_range(extents_.size(), 0);
  for (std::size_t j = 0; j < hit.size(); ++j) stage_of_range[hit[j]] = stage_of_path[paths.of_item[used.size() + j]];
  profile.stage_ranges.reserve(profile.stage_ranges.size() + hit.size());
  for (std::uint32_t r = 0; r < extents_.size(); ++r) {
    if (extents_[r].first_order != UINT64_MAX) profile.stage_ranges.push_back(model::StageRange{stage_of_range[r], extents_[r].start, extents_[r].end, 0});
  }
  return stage_of_set;
}

std::vector<model::StageId> project_nvtx(const std::vector<ApiCall>& calls,
                                         const std::vector<RangeInstance>& ranges,
                                         const std::vector<KernelSpan>& kernels,
                                         model::Profile& profile) {
  const std::vector<std::uint32_t> order = sweep_order(calls);
  EnclosingRanges enclosing(ranges);
  std::vector<std::uint32_t> set_of_call(calls.size());
  for (std::uint32_t c : order) set_of_call[c] = *enclosing.set_of(calls[c]);  // in order: never nullopt
  StageProjection projection(ranges, enclosing.take_sets());
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    projection.add_call(set_of_call[order[rank]], calls[order[rank]].thread, rank);
  }
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    if (kernels[k].call < calls.size()) projection.add_kernel(set_of_call[kernels[k].call], k, kernels[k].start_ns, kernels[k].end_ns);
  }
  const std::vector<model::StageId> stage_of_set = projection.finish(profile);
  std::vector<model::StageId> stage_of_call(calls.size());
  for (std::size_t c = 0; c < calls.size(); ++c) stage_of_call[c] = stage_of_set[set_of_call[c]];
  return stage_of_call;
}

}  // namespace kernlens::ingest
