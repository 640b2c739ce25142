// Kernel selection for the deep pass: on real discovery data (a PyTorch trace of a llama-like
// model, an ncu raw page), every invocation is replayed the way ncu filters launches
// (--kernel-name regex, then --launch-skip/--launch-count over the matching launches only)
// with std::regex, so the filters and skips are checked, not just their spelling.
#include "kernlens/profile/selection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "kernlens/analysis/aggregate.h"
#include "test_util.h"

namespace kernlens::profile {
namespace {

// Launch indexes in the order selection says ncu meets them (ids, else start times).
std::vector<std::size_t> launch_order(const model::Profile& p) {
  std::vector<std::size_t> order;
  bool ids = true;
  for (std::size_t i = 0; i < p.launches.size(); ++i) {
    if (p.launches[i].kind != model::LaunchKind::kKernel) continue;
    order.push_back(i);
    ids = ids && p.launches[i].id >= 0;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return ids ? p.launches[a].id < p.launches[b].id
               : p.launches[a].start_ns.value_or(0) < p.launches[b].start_ns.value_or(0);
  });
  return order;
}

// The name ncu would match a launch on under `base`.
std::string ncu_sees(const model::Profile& p, const model::Launch& l, NameBase base) {
  const std::string& name = p.names[l.name];
  return base == NameBase::kFunction ? ncu_function_name(name) : name;
}

// The launches (indexes into p.launches) one invocation profiles, as ncu selects them.
std::vector<std::size_t> replay(const model::Profile& p, NameBase base, const NcuInvocation& inv) {
  EXPECT_TRUE(inv.kernel_name.starts_with("regex:")) << inv.kernel_name;
  std::regex re(inv.kernel_name.substr(6));  // ECMAScript, as ncu's documented examples
  std::vector<std::size_t> matched;
  for (std::size_t i : launch_order(p)) {
    if (std::regex_search(ncu_sees(p, p.launches[i], base), re)) matched.push_back(i);
  }
  std::vector<std::size_t> profiled;
  for (std::uint64_t k = inv.launch_skip; k < inv.launch_skip + inv.launch_count; ++k) {
    if (k < matched.size()) profiled.push_back(matched[k]);
  }
  return profiled;
}

void expect_invocations_reach_picks(const model::Profile& p, const Selection& sel) {
  std::set<std::size_t> covered;
  for (const auto& inv : sel.invocations) {
    auto profiled = replay(p, sel.name_base, inv);
    EXPECT_EQ(profiled.size(), inv.launch_count) << inv.kernel_name;
    for (std::size_t pick : inv.picks) {
      const auto& k = sel.picks[pick];
      EXPECT_NE(std::find(profiled.begin(), profiled.end(), k.launch_index), profiled.end())
          << k.shown_name << " launch " << k.launch_index << " is not in " << inv.kernel_name
          << " skip " << inv.launch_skip << " count " << inv.launch_count;
      EXPECT_EQ(p.launches[k.launch_index].name, k.name);
      covered.insert(pick);
    }
    // The window holds only launches of the filter's names: no kernel profiled by accident
    // beyond those the window needs.
    EXPECT_LE(static_cast<double>(inv.launch_count), 2.0 * static_cast<double>(inv.picks.size()));
  }
  EXPECT_EQ(covered.size(), sel.picks.size());
}

TEST(Selection, LlamaTraceReachesCoverageWithFewestKernelsAndEveryPickIsReachable) {
  auto r = test::read_fixture("pytorch/llama_torch_trace.json.gz");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  auto agg = analysis::aggregate(r.profile, test::builtin_classifier());
  auto sel = select_kernels(r.profile, agg, {.coverage = 0.9, .top = 50});
  ASSERT_TRUE(sel.ok()) << sel.error().to_string();

  // PyTorch spells names with the C++ runtime's demangler, not ncu's: match function names.
  EXPECT_EQ(sel->name_base, NameBase::kFunction);
  const double total = *agg.totals.kernel_time_ns;
  ASSERT_FALSE(sel->picks.empty());
  EXPECT_GE(sel->covered_ns, 0.9 * total);
  // Fewest: the picks are the top kernels by time, and without the last one coverage fails.
  for (std::size_t i = 0; i < sel->picks.size(); ++i)
    EXPECT_EQ(sel->picks[i].name, agg.kernels[i].name);
  EXPECT_LT(sel->covered_ns - sel->picks.back().total_ns, 0.9 * total);
  EXPECT_LT(sel->invocations.size(), sel->picks.size()) << "nothing was merged";
  expect_invocations_reach_picks(r.profile, *sel);
}

TEST(Selection, RepresentativeIsFirstLaunchClosestToMedianWhenAlone) {
  auto r = test::read_fixture("pytorch/llama_torch_trace.json.gz");
  ASSERT_TRUE(r.status.ok());
  auto agg = analysis::aggregate(r.profile, test::builtin_classifier());
  // max_window_factor below 1: no merging, so each kernel gets its own best launch.
  auto sel = select_kernels(r.profile, agg, {.coverage = 0.5, .top = 5, .max_window_factor = 0.5});
  ASSERT_TRUE(sel.ok());
  ASSERT_EQ(sel->invocations.size(), sel->picks.size());
  auto order = launch_order(r.profile);
  for (const auto& k : sel->picks) {
    double best = 1e300;
    std::size_t expected = 0;
    std::uint64_t skip_expected = 0, matching = 0;
    std::string fn = ncu_function_name(r.profile.names[k.name]);
    for (std::size_t i : order) {
      const auto& l = r.profile.launches[i];
      if (ncu_function_name(r.profile.names[l.name]) != fn) continue;
      if (l.name == k.name && std::abs(*l.duration_ns - k.median_ns) < best) {
        best = std::abs(*l.duration_ns - k.median_ns);
        expected = i;
        skip_expected = matching;
      }
      ++matching;
    }
    EXPECT_EQ(k.launch_index, expected) << k.shown_name;
    const auto& inv = *std::find_if(
        sel->invocations.begin(), sel->invocations.end(), [&](const NcuInvocation& v) {
          return v.picks.size() == 1 && sel->picks[v.picks[0]].name == k.name;
        });
    EXPECT_EQ(inv.launch_skip, skip_expected) << k.shown_name;
    EXPECT_EQ(inv.launch_count, 1u);
    EXPECT_NE(k.reason.find("closest to its median"), std::string::npos) << k.reason;
  }
  expect_invocations_reach_picks(r.profile, *sel);
}

TEST(Selection, DemangledNcuNamesAreMatchedOnTheFunctionNameAndTopCapsPicks) {
  auto r = test::read_fixture("ncu/qwen_decode_raw.csv");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  auto agg = analysis::aggregate(r.profile, test::builtin_classifier());
  auto sel = select_kernels(r.profile, agg, {.coverage = 1.0, .top = 3});
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->name_base, NameBase::kFunction);
  EXPECT_EQ(sel->picks.size(), 3u);  // capped before coverage 1.0 was reached
  EXPECT_LT(sel->covered_ns, *agg.totals.kernel_time_ns);
  expect_invocations_reach_picks(r.profile, *sel);
}

// A hand-made timeline where the answer is known: A B A B C, A's median 10 ns.
TEST(Selection, SkipCountsOnlyLaunchesTheFilterMatches) {
  model::Profile p;
  p.inputs.push_back({"t.json", model::InputFormat::kPytorchTrace, "", {}, {}});
  auto add = [&](std::string_view name, std::int64_t id, double ns) {
    model::Launch l;
    l.name = p.names.intern(name);
    l.id = id;
    l.start_ns = id * 100;
    l.duration_ns = ns;
    p.launches.push_back(l);
  };
  add("void ns::a_kernel<1>(int)", 1, 50);
  add("b_kernel", 2, 5);
  add("void ns::a_kernel<1>(int)", 3, 10);
  add("b_kernel", 4, 5);
  add("void ns::a_kernel<1>(int)", 5, 10);
  auto agg = analysis::aggregate(p, test::builtin_classifier());
  auto sel = select_kernels(p, agg, {.coverage = 0.5, .top = 1});
  ASSERT_TRUE(sel.ok());
  ASSERT_EQ(sel->picks.size(), 1u);
  EXPECT_EQ(sel->picks[0].shown_name, "void ns::a_kernel<1>(int)");
  EXPECT_DOUBLE_EQ(sel->picks[0].median_ns, 10);
  EXPECT_EQ(sel->picks[0].launch_index, 2u);  // the first 10 ns launch
  ASSERT_EQ(sel->invocations.size(), 1u);
  EXPECT_EQ(sel->invocations[0].kernel_name, "regex:^(.*::)?a_kernel(\\(.*\\))?$");
  EXPECT_EQ(sel->invocations[0].launch_skip, 1u);  // b_kernel's launches are not counted
  EXPECT_EQ(sel->invocations[0].launch_count, 1u);
}

// Exports with --print-kernel-base mangled: C++ kernels mangled, nvjet (not C++) as it is.
TEST(Selection, OneMangledNameMakesTheMangledSpellingTheFilter) {
  model::Profile p;
  p.inputs.push_back({"t.csv", model::InputFormat::kNcuRawCsv, "", {}, {}});
  for (std::int64_t id = 0; id < 4; ++id) {
    model::Launch l;
    l.name = p.names.intern(id % 2 ? "_Z5scaleifPf" : "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT");
    l.id = id;
    l.duration_ns = 10;
    p.launches.push_back(l);
  }
  auto agg = analysis::aggregate(p, test::builtin_classifier());
  auto sel = select_kernels(p, agg, {.coverage = 1.0, .top = 2});
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->name_base, NameBase::kMangled);
  ASSERT_EQ(sel->invocations.size(), 1u);
  EXPECT_EQ(sel->invocations[0].kernel_name,
            "regex:^(_Z5scaleifPf|nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT)$");
}

// What --kernel-id "::regex:^(...)$:N" profiles, as ncu does it: the N-th launch of each
// kernel name the expression matches, names counted apart.
std::vector<std::size_t> replay_kernel_id(const model::Profile& p, const NcuInvocation& inv) {
  const std::string& id = inv.kernel_id;
  EXPECT_TRUE(id.starts_with("::regex:")) << id;
  const auto last = id.rfind(':');
  std::regex re(id.substr(8, last - 8));
  const std::uint64_t number = std::stoull(id.substr(last + 1));
  std::map<std::string, std::uint64_t> seen;
  std::vector<std::size_t> profiled;
  for (std::size_t i : launch_order(p)) {
    const std::string& name = p.names[p.launches[i].name];
    if (std::regex_search(name, re) && ++seen[name] == number) profiled.push_back(i);
  }
  return profiled;
}

// The real llama prefill discovery (ncu timing mode on the H100, mangled names).
TEST(Selection, MangledNamesShareOneRunThroughKernelIdAtOneLaunchEach) {
  auto r = test::read_fixture("profile_run/llama_prefill/discovery/timing_raw.csv.gz");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  auto agg = analysis::aggregate(r.profile, test::builtin_classifier());
  auto sel = select_kernels(r.profile, agg, {.coverage = 0.9, .top = 20});
  ASSERT_TRUE(sel.ok()) << sel.error().to_string();
  EXPECT_EQ(sel->name_base, NameBase::kMangled);
  EXPECT_GE(sel->covered_ns, 0.9 * sel->total_kernel_ns);
  ASSERT_EQ(sel->invocations.size(), 1u);
  const NcuInvocation& inv = sel->invocations[0];
  EXPECT_EQ(inv.launch_count, sel->picks.size());
  EXPECT_EQ(inv.picks.size(), sel->picks.size());
  EXPECT_TRUE(inv.kernel_id.starts_with("::" + inv.kernel_name + ":"));
  // Exactly one launch of each pick, and it is the one the pick names.
  auto profiled = replay_kernel_id(r.profile, inv);
  ASSERT_EQ(profiled.size(), sel->picks.size());
  for (const auto& pick : sel->picks) {
    EXPECT_NE(std::find(profiled.begin(), profiled.end(), pick.launch_index), profiled.end()) << pick.shown_name;
    EXPECT_LE(std::abs(pick.representative_ns - pick.median_ns), 0.1 * pick.median_ns) << pick.shown_name;
  }
  // The lm_head GEMM has 2 launches and so could not share launch 3: it was swapped out.
  ASSERT_EQ(sel->notes.size(), 1u);
  EXPECT_NE(sel->notes[0].find("left out nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"), std::string::npos)
      << sel->notes[0];
}

// Appends a launch of `name`, its id its position, lasting `ns`.
void add_launch(model::Profile& p, const char* name, double ns) {
  model::Launch l;
  l.name = p.names.intern(name);
  l.id = static_cast<std::int64_t>(p.launches.size());
  l.duration_ns = ns;
  p.launches.push_back(l);
}

// hot: 3 launches, the third not like the rest; cold: 5 launches, the first two not like the
// rest. `cold_first`: all of cold's launches come before hot's.
model::Profile two_kernels_without_a_common_number(bool cold_first = false) {
  model::Profile p;
  p.inputs.push_back({"t.csv", model::InputFormat::kNcuRawCsv, "", {}, {}});
  auto add = [&](const char* name, double ns) { add_launch(p, name, ns); };
  auto hot = [&] { add("_Z3hotv", 100), add("_Z3hotv", 100), add("_Z3hotv", 1); };
  auto cold = [&] { add("_Z4coldv", 1), add("_Z4coldv", 1), add("_Z4coldv", 50), add("_Z4coldv", 50), add("_Z4coldv", 50); };
  if (cold_first) {
    cold(), hot();
  } else {
    hot(), cold();
  }
  return p;
}

// Two kernels whose representative launches have different numbers, and nothing else to take
// one's place: when an ncu run costs little, two runs, the hotter kernel's first.
TEST(Selection, KernelsWithoutACommonLaunchNumberGetRunsOfTheirOwn) {
  model::Profile p = two_kernels_without_a_common_number();
  auto agg = analysis::aggregate(p, test::builtin_classifier());
  auto sel = select_kernels(p, agg, {.coverage = 1.0, .top = 2, .run_cost_in_launches = 1});
  ASSERT_TRUE(sel.ok()) << sel.error().to_string();
  ASSERT_EQ(sel->invocations.size(), 2u);
  EXPECT_EQ(sel->invocations[0].kernel_id, "::regex:^_Z3hotv$:1");
  EXPECT_EQ(sel->invocations[1].kernel_id, "::regex:^_Z4coldv$:3");
  EXPECT_EQ(sel->picks[1].launch_index, 5u);
  EXPECT_TRUE(sel->notes.empty());
  for (const auto& inv : sel->invocations) EXPECT_EQ(replay_kernel_id(p, inv).size(), 1u);
}

// A stage that repeats (warm-up, then measured passes): every pass's launches are acceptable
// representatives, and the earliest pass wins, though a later one is a little closer to the
// median: ncu ends the program after the last launch it profiles (--kill), so an earlier one
// saves the rest of the run.
TEST(Selection, ARepeatedStageIsMeasuredInItsEarliestAcceptablePass) {
  model::Profile p;
  p.inputs.push_back({"t.csv", model::InputFormat::kNcuRawCsv, "", {}, {}});
  auto add = [&](const char* name, double ns) { add_launch(p, name, ns); };
  for (double gemm_ns : {104.0, 100.0, 100.0}) {  // three passes of one stage
    add("_Z4gemmv", gemm_ns);
    add("_Z4normv", 20);
  }
  auto agg = analysis::aggregate(p, test::builtin_classifier());
  auto sel = select_kernels(p, agg, {.coverage = 1.0, .top = 2});
  ASSERT_TRUE(sel.ok()) << sel.error().to_string();
  ASSERT_EQ(sel->invocations.size(), 1u);
  EXPECT_EQ(sel->invocations[0].kernel_id, "::regex:^(_Z4gemmv|_Z4normv)$:1");
  EXPECT_EQ(sel->picks[0].launch_index, 0u);
  EXPECT_EQ(sel->picks[1].launch_index, 1u);
}

// Kernels that share no launch number, as an ncu run costs (it starts the program again): one
// run over the 2 launches where cold's last good launch meets hot's first, not two runs. Where
// no such window exists (hot's good launches end before cold's begin), two runs all the same.
TEST(Selection, OneRunOverAWindowBeatsSeveralRunsWhenLaunchesCostLess) {
  model::Profile apart = two_kernels_without_a_common_number();
  auto apart_agg = analysis::aggregate(apart, test::builtin_classifier());
  auto two = select_kernels(apart, apart_agg, {.coverage = 1.0, .top = 2});
  ASSERT_TRUE(two.ok()) << two.error().to_string();
  EXPECT_EQ(two->invocations.size(), 2u);  // the only short windows hold hot's odd launch
  model::Profile p = two_kernels_without_a_common_number(/*cold_first=*/true);
  auto agg = analysis::aggregate(p, test::builtin_classifier());
  auto sel = select_kernels(p, agg, {.coverage = 1.0, .top = 2});
  ASSERT_TRUE(sel.ok()) << sel.error().to_string();
  ASSERT_EQ(sel->invocations.size(), 1u);
  const auto& inv = sel->invocations[0];
  EXPECT_EQ(inv.kernel_name, "regex:^(_Z3hotv|_Z4coldv)$");
  EXPECT_TRUE(inv.kernel_id.empty());
  EXPECT_EQ(inv.launch_skip, 4u);
  EXPECT_EQ(inv.launch_count, 2u);
  EXPECT_EQ(sel->picks[0].launch_index, 5u);  // hot's first
  EXPECT_EQ(sel->picks[1].launch_index, 4u);  // cold's last
  ASSERT_EQ(sel->notes.size(), 1u);
  EXPECT_NE(sel->notes[0].find("one ncu run over a window of 2 launches instead of 2 runs"), std::string::npos)
      << sel->notes[0];
  expect_invocations_reach_picks(p, *sel);
}

// Four layers of a norm, 16 GEMMs and an activation (each kernel's first launch cold), then an
// lm_head launched once: the per-layer kernels share launch 2, lm_head has only launch 1, and the
// shortest window holding all four is the last layer's 19 launches.
model::Profile layers_then_lm_head() {
  model::Profile p;
  p.inputs.push_back({"t.csv", model::InputFormat::kNcuRawCsv, "", {}, {}});
  for (int layer = 0; layer < 4; ++layer) {
    const bool cold = layer == 0;
    add_launch(p, "_Z4normv", cold ? 30 : 20);
    for (int g = 0; g < 16; ++g) {
      add_launch(p, "_Z4gemmv", cold && g == 0 ? 130 : 100);
      if (g == 7) add_launch(p, "_Z3actv", cold ? 40 : 30);
    }
  }
  add_launch(p, "_Z6lmheadv", 2000);
  return p;
}

// Issue 15: a second ncu run costs a start of the program (30 launches' worth), unless it
// attaches to a copy of the program started beside discovery (8). One window of 19 launches
// beats two runs of the first kind, not two attached runs (4 launches and an attach).
TEST(Selection, RunsAttachedToProgramsStartedEarlyBeatAWindow) {
  model::Profile p = layers_then_lm_head();
  auto agg = analysis::aggregate(p, test::builtin_classifier());
  for (std::size_t attached : {0u, 1u}) {
    auto window = select_kernels(p, agg, {.coverage = 1.0, .top = 4, .attached_runs = attached});
    ASSERT_TRUE(window.ok()) << window.error().to_string();
    ASSERT_EQ(window->invocations.size(), 1u) << attached;
    EXPECT_EQ(window->invocations[0].launch_count, 19u);
    EXPECT_TRUE(window->invocations[0].kernel_id.empty());
    const auto profiled = replay(p, window->name_base, window->invocations[0]);
    EXPECT_EQ(profiled.size(), 19u);
    for (const auto& pick : window->picks) {
      EXPECT_NE(std::find(profiled.begin(), profiled.end(), pick.launch_index), profiled.end()) << pick.shown_name;
    }
  }
  auto two = select_kernels(p, agg, {.coverage = 1.0, .top = 4, .attached_runs = 2});
  ASSERT_TRUE(two.ok()) << two.error().to_string();
  ASSERT_EQ(two->invocations.size(), 2u);
  std::vector<std::size_t> profiled;
  for (const auto& inv : two->invocations) {
    const auto launches = replay_kernel_id(p, inv);
    EXPECT_EQ(launches.size(), inv.launch_count) << inv.kernel_id;
    profiled.insert(profiled.end(), launches.begin(), launches.end());
  }
  EXPECT_EQ(profiled.size(), 4u);
  for (const auto& pick : two->picks) {
    EXPECT_NE(std::find(profiled.begin(), profiled.end(), pick.launch_index), profiled.end()) << pick.shown_name;
  }
  EXPECT_TRUE(two->invocations[0].kernel_id.ends_with(":2")) << two->invocations[0].kernel_id;
  EXPECT_EQ(two->invocations[1].kernel_id, "::regex:^_Z6lmheadv$:1");
}

TEST(Selection, RejectsBadOptionsAndEmptyDiscovery) {
  model::Profile p;
  auto agg = analysis::aggregate(p, test::builtin_classifier());
  EXPECT_FALSE(select_kernels(p, agg, {.coverage = 0}).ok());
  EXPECT_FALSE(select_kernels(p, agg, {.coverage = 1.5}).ok());
  EXPECT_FALSE(select_kernels(p, agg, {.top = 0}).ok());
  auto empty = select_kernels(p, agg, {});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("no timed kernel"), std::string::npos);
}

TEST(EscapeRegex, RealKernelNamesMatchThemselvesOnly) {
  const std::vector<std::string> names = {
      "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"
      "BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::"
      "MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, "
      "c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::"
      "{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::"
      "BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >"
      "(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::"
      "BFloat16, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})",
      "void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<c10::BFloat16, "
      "at::native::ArgMaxOps<float>, unsigned int, long, (int)4, (int)4>>(T3)",
      "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT",
      "a.b|c$d^e?f*g+h[i]j{k}l\\m",
  };
  for (const auto& name : names) {
    std::regex re("^" + escape_regex(name) + "$");
    EXPECT_TRUE(std::regex_search(name, re)) << name;
    EXPECT_FALSE(std::regex_search(name + "x", re)) << name;
  }
  EXPECT_EQ(escape_regex("f(int*)"), "f\\(int\\*\\)");
  EXPECT_EQ(escape_regex("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"),
            "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT");
  // The nvjet pattern must not match its _bias_ sibling.
  std::regex nvjet("^" + escape_regex("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT") + "$");
  EXPECT_FALSE(std::regex_search("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_bias_NNT", nvjet));
}

TEST(NcuFunctionName, AgreesWithWhatNcuPrinted) {
  // Pairs from real exports: the PyTorch trace's name and the name ncu printed in
  // "==PROF== Profiling" (tests/fixtures/ncu/*.log, names/ fixtures).
  EXPECT_EQ(ncu_function_name("void at::native::vectorized_elementwise_kernel<4, at::native::"
                              "FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::"
                              "FillFunctor<float>, std::array<char*, 1ul>)"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(ncu_function_name("void (anonymous namespace)::elementwise_kernel_with_index<int, "
                              "at::native::arange_cuda_out(c10::Scalar const&)::{lambda()#1}>"
                              "(int, int*)"),
            "elementwise_kernel_with_index");
  EXPECT_EQ(ncu_function_name("void at::native::<unnamed>::indexSelectSmallIndex<c10::BFloat16, "
                              "long, unsigned int, (int)2, (int)2, (int)-2>(at::cuda::detail::"
                              "TensorInfo<T1, T3>, int, T3, long)"),
            "indexSelectSmallIndex");
  EXPECT_EQ(ncu_function_name("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"),
            "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT");
  EXPECT_EQ(ncu_function_name("demo::fill(float*, int, float)"), "fill");
  // ncu printed "demo::fill(float *, int, float)": the function pattern allows both parts.
  std::regex re("^" + name_pattern(NameBase::kFunction, "fill") + "$");
  EXPECT_TRUE(std::regex_search("demo::fill(float *, int, float)", re));
  EXPECT_TRUE(std::regex_search("fill", re));
  EXPECT_FALSE(std::regex_search("prefill", re));
}

}  // namespace
}  // namespace kernlens::profile
