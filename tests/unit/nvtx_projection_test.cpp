// NVTX ranges projected onto the GPU through the API calls that launched the kernels, as
// Nsight Systems' nvtx_gpu_proj_trace report does it.
#include "kernlens/ingest/timeline/nvtx_projection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <tuple>

namespace kernlens::ingest {
namespace {

using model::NvtxRange;
using model::RangeKind;

RangeInstance push(std::int64_t thread, std::int64_t start, std::int64_t end, std::string name,
                   std::string domain = "") {
  return {thread, start, end, NvtxRange{std::move(domain), std::move(name), RangeKind::kPushPop}};
}

RangeInstance start_end(std::int64_t thread, std::int64_t start, std::int64_t end,
                        std::string name) {
  return {thread, start, end, NvtxRange{"", std::move(name), RangeKind::kStartEnd}};
}

std::string path_of(const model::Profile& p, model::StageId s) {
  std::string out = model::push_pop_path(p.stages[s]);
  for (const auto& r : p.stages[s].start_end) out += " [" + model::range_label(r) + "]";
  return out;
}

// `steps` steps of 1,000 ns on thread 1, each a push/pop "step" around a "layer", an
// "llm@layer" and a start/end range named by end_name(step), with a call and its kernel in each
// of the three and one in the step alone.
void add_steps(std::int64_t steps, const std::function<std::string(std::int64_t)>& end_name,
               std::vector<RangeInstance>& ranges, std::vector<ApiCall>& calls, std::vector<KernelSpan>& kernels) {
  for (std::int64_t step = 0; step < steps; ++step) {
    const std::int64_t t = step * 1000;
    ranges.push_back(push(1, t, t + 900, "step"));
    ranges.push_back(push(1, t + 10, t + 100, "layer"));
    ranges.push_back(push(1, t + 200, t + 300, "layer", "llm"));
    ranges.push_back(start_end(1, t + 400, t + 500, end_name(step)));
    for (std::int64_t at : {20, 210, 410, 600}) {
      kernels.push_back({static_cast<std::uint32_t>(calls.size()), t + at + 5, t + at + 6});
      calls.push_back({1, t + at, t + at + 1});
    }
  }
}

TEST(NvtxProjection, NestedPushPopOutermostFirstAndOnlyOnTheCallsThread) {
  // Thread 1: step [0,100) > decode [10,90) > layer [20,40); thread 2 has its own range.
  std::vector<RangeInstance> ranges = {push(1, 20, 40, "layer", "llm"), push(1, 0, 100, "step"),
                                       push(1, 10, 90, "decode"), push(2, 0, 100, "other")};
  std::vector<ApiCall> calls = {{1, 25, 30}, {1, 50, 55}, {1, 95, 99}, {1, 150, 151}, {2, 5, 6}};
  model::Profile p;
  auto stages = project_nvtx(calls, ranges, {}, p);
  ASSERT_EQ(stages.size(), 5u);
  EXPECT_EQ(path_of(p, stages[0]), "step/decode/llm@layer");
  EXPECT_EQ(path_of(p, stages[1]), "step/decode");
  EXPECT_EQ(path_of(p, stages[2]), "step");
  EXPECT_EQ(stages[3], 0u);  // after every range
  EXPECT_EQ(path_of(p, stages[4]), "other");
}

TEST(NvtxProjection, CallMustLieWhollyInsideTheRange) {
  // A call that starts inside a range and ends after it is not in it (nsys compares both ends).
  std::vector<RangeInstance> ranges = {push(1, 0, 10, "a")};
  std::vector<ApiCall> calls = {{1, 5, 12}, {1, 0, 10}};
  model::Profile p;
  auto stages = project_nvtx(calls, ranges, {}, p);
  EXPECT_EQ(stages[0], 0u);
  EXPECT_EQ(path_of(p, stages[1]), "a");
}

TEST(NvtxProjection, StartEndRangesAfterPushPopAndOverlappingFreely) {
  std::vector<RangeInstance> ranges = {start_end(1, 0, 50, "io"), push(1, 10, 60, "step"),
                                       start_end(1, 5, 100, "epoch")};
  std::vector<ApiCall> calls = {{1, 20, 21}, {1, 55, 56}};
  model::Profile p;
  auto stages = project_nvtx(calls, ranges, {}, p);
  EXPECT_EQ(path_of(p, stages[0]), "step [io] [epoch]");
  EXPECT_EQ(path_of(p, stages[1]), "step [epoch]");
}

TEST(NvtxProjection, EqualStartsPutTheLongerRangeOutside) {
  std::vector<RangeInstance> ranges = {push(1, 0, 10, "inner"), push(1, 0, 20, "outer")};
  model::Profile p;
  auto stages = project_nvtx({{1, 1, 2}}, ranges, {}, p);
  EXPECT_EQ(path_of(p, stages[0]), "outer/inner");
}

TEST(NvtxProjection, ExtentPerRangeInstanceFromItsKernels) {
  // Two decode instances, each with a nested layer; kernels run after their launches.
  std::vector<RangeInstance> ranges = {push(1, 0, 100, "decode"), push(1, 10, 50, "layer"),
                                       push(1, 200, 300, "decode"), push(1, 210, 250, "layer")};
  std::vector<ApiCall> calls = {{1, 20, 21}, {1, 60, 61}, {1, 220, 221}};
  std::vector<KernelSpan> kernels = {{0, 30, 40}, {1, 70, 95}, {1, 96, 130}, {2, 400, 410}};
  model::Profile p;
  project_nvtx(calls, ranges, kernels, p);
  std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> got;
  for (const auto& r : p.stage_ranges) got.emplace_back(path_of(p, r.stage), r.start_ns, r.end_ns);
  std::sort(got.begin(), got.end());
  // A CUDA graph launch (call 1 here) can start several kernels: the extent spans them all.
  EXPECT_EQ(got, (decltype(got){{"decode", 30, 130},
                                {"decode", 400, 410},
                                {"decode/layer", 30, 40},
                                {"decode/layer", 400, 410}}));
}

TEST(NvtxProjection, InstanceKeyOfAStartEndRangeIsItselfAlone) {
  std::vector<RangeInstance> ranges = {push(1, 0, 100, "step"), start_end(1, 0, 100, "io")};
  model::Profile p;
  project_nvtx({{1, 1, 2}}, ranges, {{0, 5, 6}}, p);
  std::vector<std::string> keys;
  for (const auto& r : p.stage_ranges) keys.push_back(path_of(p, r.stage));
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{" [io]", "step"}));
}

// Calls of several threads interleaved, each thread's in time order: the sets of the whole
// projection. A call earlier on its thread than the one before is refused, not guessed.
TEST(EnclosingRanges, ThreadsInterleaveButEachGoesForwardOnly) {
  std::vector<RangeInstance> ranges = {push(1, 0, 100, "step"), push(2, 0, 100, "other"), push(1, 10, 20, "layer")};
  EnclosingRanges sweep(ranges);
  auto set1 = sweep.set_of({1, 12, 13});
  auto set2 = sweep.set_of({2, 5, 6});
  auto set3 = sweep.set_of({1, 30, 31});
  auto again = sweep.set_of({2, 50, 51});
  EXPECT_FALSE(sweep.set_of({1, 11, 12}).has_value());  // thread 1 was at 30 already
  EXPECT_FALSE(sweep.set_of({1, 30, 30}).has_value());  // same start, earlier end
  ASSERT_TRUE(set1 && set2 && set3 && again);
  const std::vector<RangeSet> sets = sweep.take_sets();
  auto names = [&](std::uint32_t set) {
    std::string out;
    for (auto r : sets[set]) out += ranges[r].range.name + " ";
    return out;
  };
  EXPECT_EQ(names(*set1), "step layer ");
  EXPECT_EQ(names(*set2), "other ");
  EXPECT_EQ(names(*set3), "step ");
  EXPECT_EQ(*again, *set2);  // one set, held once
  EXPECT_EQ(sets.size(), 4u);  // and the empty set
}

// One sweep, and a sweep begun afresh at any call of a stretch that comes in order on each
// thread, find each call the ranges its definition gives: nested and overlapping push/pop ranges,
// start/end ranges, ranges that end before a call ends or at its start, a range never ended,
// on two interleaved threads; in_order checks the order alone.
TEST(EnclosingRanges, AFreshSweepFindsTheSetsOfOneSweep) {
  std::vector<RangeInstance> ranges = {push(1, 0, 1000, "step"), push(1, 100, 400, "layer0"),
                                       push(1, 150, 200, "attn"), push(1, 400, 700, "layer1"),
                                       start_end(1, 120, 650, "io"), push(2, 0, 500, "other"),
                                       push(2, 300, INT64_MAX, "open"),
                                       start_end(2, 250, 260, "tick")};
  // Then many short ranges in a row, of which whole blocks end before a later call starts.
  for (std::int64_t i = 0; i < 700; ++i) ranges.push_back(push(1, 1100 + 3 * i, 1100 + 3 * i + 2, "tick" + std::to_string(i % 3)));
  ranges.push_back(push(1, 1090, 3300, "ticks"));
  std::vector<ApiCall> calls;
  for (std::int64_t t = 0; t < 3400; t += 25) {
    calls.push_back({1, t, t + (t % 2 ? 30 : 1)});
    calls.push_back({2, t + 5, t + 10});
  }
  // The set by its definition: the thread's ranges that start by the call's start and end at or
  // after both its start and its end; push/pop first, each kind by (start, the longer first).
  auto set_by_definition = [&](const ApiCall& c) {
    RangeSet set;
    for (std::uint32_t r = 0; r < ranges.size(); ++r) {
      const RangeInstance& x = ranges[r];
      if (x.thread == c.thread && x.start_ns <= c.start_ns && x.end_ns >= c.start_ns && x.end_ns >= c.end_ns) set.push_back(r);
    }
    std::stable_sort(set.begin(), set.end(), [&](std::uint32_t a, std::uint32_t b) {
      return std::tuple(ranges[a].range.kind != RangeKind::kPushPop, ranges[a].start_ns, -ranges[a].end_ns) <
             std::tuple(ranges[b].range.kind != RangeKind::kPushPop, ranges[b].start_ns, -ranges[b].end_ns);
    });
    return set;
  };
  EnclosingRanges whole(ranges);
  std::vector<RangeSet> expected;
  for (const ApiCall& c : calls) {
    expected.push_back(set_by_definition(c));
    EXPECT_EQ(whole.sets()[*whole.set_of(c)], expected.back()) << c.thread << " " << c.start_ns << " " << c.end_ns;
  }
  ASSERT_GT(whole.sets().size(), 8u);  // many distinct sets
  for (std::size_t begin : {1u, 7u, 20u, 33u, 60u, 95u, 150u, 200u, 251u}) {
    const std::unique_ptr<EnclosingRanges> fresh = whole.fresh();
    for (std::size_t i = begin; i < calls.size(); ++i) {
      auto set = fresh->set_of(calls[i]);
      ASSERT_TRUE(set);
      EXPECT_EQ(fresh->sets()[*set], expected[i]) << "from call " << begin << ", call " << i;
    }
  }
  const std::unique_ptr<EnclosingRanges> order = whole.fresh();
  EXPECT_TRUE(order->in_order({1, 50, 60}));
  EXPECT_TRUE(order->in_order({2, 10, 20}));
  EXPECT_FALSE(order->in_order({1, 50, 55}));  // same start, earlier end
  EXPECT_TRUE(order->in_order({1, 50, 60}));
  EXPECT_EQ(order->intern(expected[3]), order->intern(expected[3]));  // held once
}

// Each distinct set is held once and numbered in the order first interned (the empty set is 0),
// through many growths of the index and sets that differ only in order, length or one range;
// every other set is moved in with its hash worked out beforehand, as the calls' builder does.
TEST(EnclosingRanges, InternNumbersEachDistinctSetOnceInFirstComeOrder) {
  const std::vector<RangeInstance> ranges = {push(1, 0, 10, "a")};
  EnclosingRanges sweep(ranges);
  std::mt19937 rng(11);
  std::map<RangeSet, std::uint32_t> first_come = {{RangeSet{}, 0}};
  for (int i = 0; i < 20000; ++i) {
    RangeSet set(rng() % 4);
    for (auto& r : set) r = static_cast<std::uint32_t>(rng() % 40);
    const auto [it, is_new] = first_come.try_emplace(set, static_cast<std::uint32_t>(first_come.size()));
    if (i % 2 == 0) {
      ASSERT_EQ(sweep.intern(set), it->second) << i;
    } else {
      const std::size_t hash = EnclosingRanges::hash_of(set);
      ASSERT_EQ(sweep.intern(std::move(set), hash), it->second) << i;
    }
  }
  EXPECT_GT(first_come.size(), 5000u);  // the index grew ten times
  ASSERT_EQ(sweep.sets().size(), first_come.size());
  for (const auto& [set, id] : first_come) EXPECT_EQ(sweep.sets()[id], set);
  EXPECT_EQ(sweep.intern(RangeSet{}), 0u);
}

// Stage ids come in one order whatever order calls and kernels are added in: the sets by
// their first call on each thread, then the range instances by their first kernel.
TEST(StageProjection, StageIdsDoNotDependOnTheOrderWorkIsAdded) {
  std::vector<RangeInstance> ranges = {push(1, 0, 100, "a"), push(1, 200, 300, "b"), push(1, 210, 220, "c")};
  auto stage_names = [&](bool reversed) {
    EnclosingRanges sweep(ranges);
    const std::uint32_t in_a = *sweep.set_of({1, 10, 11}), in_c = *sweep.set_of({1, 212, 213});
    StageProjection projection(ranges, sweep.take_sets());
    std::vector<std::function<void()>> steps = {
        [&] { projection.add_call(in_a, 1, 0); }, [&] { projection.add_call(in_c, 1, 1); },
        [&] { projection.add_kernel(in_a, 5, 20, 30); }, [&] { projection.add_kernel(in_c, 7, 230, 240); }};
    if (reversed) std::reverse(steps.begin(), steps.end());
    for (auto& step : steps) step();
    model::Profile p;
    projection.finish(p);
    std::vector<std::string> names;
    for (std::size_t s = 0; s < p.stages.size(); ++s) names.push_back(path_of(p, static_cast<model::StageId>(s)));
    std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> extents;
    for (const auto& r : p.stage_ranges) extents.emplace_back(path_of(p, r.stage), r.start_ns, r.end_ns);
    return std::pair{names, extents};
  };
  const auto in_order = stage_names(false);
  EXPECT_EQ(in_order.first, (std::vector<std::string>{"", "a", "b/c", "b"}));
  EXPECT_EQ(in_order.second, (std::vector<std::tuple<std::string, std::int64_t, std::int64_t>>{
                                 {"a", 20, 30}, {"b", 230, 240}, {"b/c", 230, 240}}));
  EXPECT_EQ(stage_names(true), in_order);
}

// The stages are interned in the order of the sets' first calls, then of the ranges' first
// kernels, whatever order the sets were made in: here the set made second is called first and
// its kernel comes first.
TEST(StageProjection, StagesInTheOrderOfFirstCallsThenFirstKernels) {
  std::vector<RangeInstance> ranges = {push(1, 0, 100, "a"), push(1, 200, 300, "b"), start_end(1, 5, 60, "x"),
                                       start_end(1, 205, 260, "y")};
  EnclosingRanges sweep(ranges);
  const std::uint32_t in_a = *sweep.set_of({1, 10, 11}), in_b = *sweep.set_of({1, 210, 211});
  StageProjection projection(ranges, sweep.take_sets());
  projection.add_call(in_b, 1, 0);
  projection.add_call(in_a, 1, 1);
  projection.add_kernel(in_b, 5, 220, 230);
  projection.add_kernel(in_a, 7, 20, 30);
  model::Profile p;
  projection.finish(p);
  std::vector<std::string> names;
  for (std::size_t s = 0; s < p.stages.size(); ++s) names.push_back(path_of(p, static_cast<model::StageId>(s)));
  EXPECT_EQ(names, (std::vector<std::string>{"", "b [y]", "a [x]", "b", " [y]", "a", " [x]"}));
}

// The paths are looked up in stretches on threads: the same stages, in the same order, with the
// same extents on any number, for enough sets and range instances (12,000 and 16,000) that every
// thread has a stretch, and a path first met late (the first "tick" at the second step); and the
// same where the ranges were labelled early (label_ranges, as the nsys reader does beside the
// kernel rows), on another number of threads than finish's.
TEST(StageProjection, TheSameStagesOnAnyNumberOfThreads) {
  std::vector<RangeInstance> ranges;
  std::vector<ApiCall> calls;
  std::vector<KernelSpan> kernels;
  add_steps(4000, [](std::int64_t step) { return step % 7 == 0 ? "mark" : "tick"; }, ranges, calls, kernels);
  using Stages = std::tuple<std::vector<model::StageId>, std::vector<std::string>,
                            std::vector<std::tuple<std::string, std::int64_t, std::int64_t>>>;
  auto project = [&](unsigned threads, unsigned label_early_on = 0) {
    EnclosingRanges sweep(ranges);
    std::vector<std::uint32_t> set_of_call;
    for (const ApiCall& c : calls) set_of_call.push_back(*sweep.set_of(c));
    StageProjection projection(ranges, sweep.take_sets());
    if (label_early_on) projection.label_ranges(label_early_on);
    for (std::size_t k = 0; k < calls.size(); ++k) {
      projection.add_call(set_of_call[k], 1, k);
      projection.add_kernel(set_of_call[kernels[k].call], k, kernels[k].start_ns, kernels[k].end_ns);
    }
    model::Profile p;
    Stages out;
    std::get<0>(out) = projection.finish(p, threads);
    for (std::size_t s = 0; s < p.stages.size(); ++s) std::get<1>(out).push_back(path_of(p, static_cast<model::StageId>(s)));
    for (const auto& r : p.stage_ranges) std::get<2>(out).emplace_back(path_of(p, r.stage), r.start_ns, r.end_ns);
    return out;
  };
  const Stages one = project(1);
  EXPECT_EQ(std::get<1>(one), (std::vector<std::string>{"", "step/layer", "step/llm@layer", "step [mark]", "step",
                                                        "step [tick]", " [mark]", " [tick]"}));
  ASSERT_EQ(std::get<2>(one).size(), ranges.size());
  EXPECT_EQ(std::get<2>(one)[1], std::make_tuple(std::string("step/layer"), std::int64_t{25}, std::int64_t{26}));
  for (unsigned threads : {2u, 3u, 8u}) EXPECT_EQ(project(threads), one) << threads << " threads";
  EXPECT_EQ(project(1, 4), one) << "labelled early on 4 threads";
  EXPECT_EQ(project(8, 1), one) << "labelled early on 1 thread";
}

// Each stage is interned once, looked up by its ranges' labels (domain, name and kind): every
// instance of a path shares its stage, and a name in another domain or of another kind is
// another stage, as its key is; the stages come in the order of their first call.
TEST(NvtxProjection, RepeatedPathsShareAStageAndLabelsTellDomainsAndKindsApart) {
  std::vector<RangeInstance> ranges;
  std::vector<ApiCall> calls;
  std::vector<KernelSpan> kernels;
  add_steps(3, [](std::int64_t) { return "layer"; }, ranges, calls, kernels);
  model::Profile p;
  const auto stages = project_nvtx(calls, ranges, kernels, p);
  ASSERT_EQ(stages.size(), 12u);
  const std::vector<std::string> expected = {"step/layer", "step/llm@layer", "step [layer]", "step"};
  for (std::size_t c = 0; c < stages.size(); ++c) {
    EXPECT_EQ(path_of(p, stages[c]), expected[c % 4]) << c;
    EXPECT_EQ(stages[c], stages[c % 4]) << c;  // the same stage in every step
  }
  std::vector<std::string> in_order;
  for (std::size_t s = 1; s < p.stages.size(); ++s) in_order.push_back(path_of(p, static_cast<model::StageId>(s)));
  // The four paths of the calls, then the range instances' own stages not yet among them (the
  // start/end range alone), each once.
  EXPECT_EQ(in_order, (std::vector<std::string>{"step/layer", "step/llm@layer", "step [layer]", "step", " [layer]"}));
  EXPECT_EQ(p.stage_ranges.size(), ranges.size());  // every instance launched a kernel
}

TEST(NvtxProjection, NoRangesNoCalls) {
  model::Profile p;
  EXPECT_TRUE(project_nvtx({}, {}, {}, p).empty());
  auto stages = project_nvtx({{1, 0, 1}}, {}, {{0, 1, 2}}, p);
  EXPECT_EQ(stages, (std::vector<model::StageId>{0}));
  EXPECT_TRUE(p.stage_ranges.empty());
}

}  // namespace
}  // namespace kernlens::ingest
