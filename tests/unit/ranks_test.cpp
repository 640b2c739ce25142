#include "kernlens/analysis/ranks.h"

#include <gtest/gtest.h>

#include <map>

#include "kernlens/analysis/aggregate.h"
#include "kernlens/analysis/timeline.h"
#include "kernlens/ingest/reader.h"
#include "test_util.h"

namespace kernlens::analysis {
namespace {

// Two inputs (ranks), each one GPU: kernels given as (name, device, start, duration).
struct TwoRanks {
  model::Profile p;
  TwoRanks() {
    for (int r = 0; r < 2; ++r) {
      model::InputInfo in{"rank" + std::to_string(r), model::InputFormat::kPytorchTrace, "", {}, {}};
      in.distributed = model::DistributedInfo{1 - r, 2, "nccl"};  // input 0 says rank 1
      p.inputs.push_back(in);
    }
  }
  void kernel(std::uint32_t input, std::string_view name, std::int16_t device, std::int64_t start, double dur,
              std::int64_t bytes = model::kUnknown) {
    model::Launch l;
    l.name = p.names.intern(name);
    l.input = input;
    l.device_ordinal = device;
    l.start_ns = start;
    l.duration_ns = dur;
    l.bytes = bytes;
    p.launches.push_back(l);
  }
  RankAnalysis run() { return analyze_ranks(p, aggregate(p, test::builtin_classifier())); }
};

TEST(Ranks, CommunicationKernelsAndPeerCopiesByName) {
  using model::LaunchKind;
  // Which kernels are communication is the kernel rules' (op class "comm"); the name says which collective.
  const auto& rules = test::builtin_classifier();
  auto collective = [&](std::string_view name, LaunchKind kind) {
    return collective_of(name, kind, rules.classify(name).op_class == names::OpClass::kComm);
  };
  EXPECT_EQ(collective("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
                       LaunchKind::kKernel), "all-reduce");
  EXPECT_EQ(collective("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", LaunchKind::kKernel), "reduce-scatter");
  EXPECT_EQ(collective("ncclDevKernel_AllGather_RING_LL", LaunchKind::kKernel), "all-gather");
  EXPECT_EQ(collective("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", LaunchKind::kKernel), "send/recv");
  EXPECT_EQ(collective("ncclDevKernel_Broadcast_RING_LL", LaunchKind::kKernel), "broadcast");
  EXPECT_EQ(collective("nvshmemi_transfer_put_kernel", LaunchKind::kKernel), "nvshmem");
  EXPECT_EQ(collective("void c10d::intra_node_comm::oneShotAllReduceKernel<(int)2>", LaunchKind::kKernel),
            "all-reduce");
  EXPECT_EQ(collective("Memcpy PtoP (Device -> Device)", LaunchKind::kMemcpy), "peer copy");
  EXPECT_EQ(collective("Memcpy DtoD (Device -> Device)", LaunchKind::kMemcpy), "");
  EXPECT_EQ(collective("void at::native::reduce_kernel<512, 1>", LaunchKind::kKernel), "");
  // A name the rules do not class "comm" is compute, whatever it holds.
  EXPECT_EQ(collective_of("my_nccl_like_gemm_kernel", LaunchKind::kKernel, false), "");
}

TEST(Ranks, RankFromDistributedInfoKernelTimeOverlapAndStraggler) {
  TwoRanks t;
  // Input 0 (rank 1): compute [0,100) and [150,200) on stream A, all-reduce [50,180) on B:
  // overlapped 50 + 30 = 80 of 130. Input 1 (rank 0): compute [0,300), all-reduce [300,310).
  t.kernel(0, "gemm_a", 0, 0, 100);
  t.kernel(0, "gemm_a", 0, 150, 50);
  t.kernel(0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 50, 130, 4096);
  t.kernel(1, "gemm_a", 1, 0, 300);
  t.kernel(1, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1, 300, 10, 4096);
  RankAnalysis a = t.run();
  ASSERT_EQ(a.ranks.size(), 2u);
  const RankRow& r0 = a.ranks[0];
  const RankRow& r1 = a.ranks[1];
  EXPECT_EQ(r0.rank, 0);
  EXPECT_EQ(r0.input, "rank1");
  EXPECT_TRUE(r0.rank_from_input);
  EXPECT_EQ(r1.kernel_time_ns, 280);
  EXPECT_EQ(r1.comm.comm_ns, 130);
  EXPECT_EQ(r1.comm.overlapped_ns, 80);
  EXPECT_EQ(r1.comm.exposed_ns(), 50);
  EXPECT_EQ(r0.comm.overlapped_ns, 0);
  // Rank 0 spent 10 ns in its all-reduce, rank 1 130 ns: rank 1 waited for rank 0.
  EXPECT_EQ(r0.role, RankRow::Role::kStraggler);
  EXPECT_EQ(r1.role, RankRow::Role::kWaiting);
  ASSERT_EQ(r1.collectives.size(), 1u);
  EXPECT_EQ(r1.collectives[0].kind, "all-reduce");
  EXPECT_EQ(r1.collectives[0].bytes, 4096);
  // Skew by family: gemm_a 300 on rank 0, 150 on rank 1.
  bool found = false;
  for (const auto& s : a.skew) {
    if (s.what == "family" && s.name == "gemm_a") {
      found = true;
      EXPECT_EQ(s.slowest_rank, 0);
      EXPECT_EQ(s.fastest_rank, 1);
      EXPECT_EQ(s.spread_ns(), 150);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Ranks, EqualCommunicationNamesNoStraggler) {
  TwoRanks t;
  t.kernel(0, "ncclDevKernel_AllReduce", 0, 0, 100);
  t.kernel(1, "ncclDevKernel_AllReduce", 0, 0, 90);
  RankAnalysis a = t.run();
  for (const auto& r : a.ranks) EXPECT_EQ(r.role, RankRow::Role::kNone);
}

// What a real 2-rank trace showed (scripts/device/multigpu_two_gpus.sh, rank 0 slowed before
// each all-reduce): rank 0 waited once, 114 ms, at the barrier at the profiler's start; rank
// 1 waited 20 ms in each of the six all-reduces after it. The totals are alike (114.7 and
// 125.2 ms); each rank's typical collective is not.
TEST(Ranks, AOneOffWaitDoesNotHideTheStragglerOfEveryLayer) {
  TwoRanks t;  // input 1 is rank 0
  t.kernel(1, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1, 0, 114'000'000);
  t.kernel(0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 113'800'000, 200'000);
  for (std::int64_t layer = 0; layer < 6; ++layer) {
    const std::int64_t at = 120'000'000 + layer * 21'000'000;
    t.kernel(0, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 0, at, 20'800'000);
    t.kernel(1, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 1, at + 20'770'000, 30'000);
  }
  RankAnalysis a = t.run();
  ASSERT_EQ(a.ranks.size(), 2u);
  EXPECT_GT(a.ranks[0].comm.comm_ns, kStragglerCommShare * a.ranks[1].comm.comm_ns);  // totals name no one
  EXPECT_EQ(a.ranks[0].role, RankRow::Role::kStraggler);
  EXPECT_EQ(a.ranks[1].role, RankRow::Role::kWaiting);

  // With fewer than kStragglerMedianMinCollectives collectives a rank has no typical one.
  // Here rank 0's median (10) is far below rank 1's (505), but rank 1 has two collectives.
  TwoRanks few;
  for (double d : {1000, 10, 10}) few.kernel(1, "ncclDevKernel_AllReduce", 1, 0, d);
  for (double d : {10, 1000}) few.kernel(0, "ncclDevKernel_AllReduce", 0, 0, d);
  for (const auto& r : few.run().ranks) EXPECT_EQ(r.role, RankRow::Role::kNone);

  // Alike medians and totals: no one.
  TwoRanks even;
  for (std::int64_t i = 0; i < 4; ++i) {
    even.kernel(0, "ncclDevKernel_AllReduce", 0, i * 100, 50 + static_cast<double>(i));
    even.kernel(1, "ncclDevKernel_AllReduce", 1, i * 100, 52);
  }
  for (const auto& r : even.run().ranks) EXPECT_EQ(r.role, RankRow::Role::kNone);
}

TEST(Ranks, DuplicateRanksAreNumberedInInputOrderWithAWarning) {
  TwoRanks t;
  t.p.inputs[1].distributed->rank = 1;  // both say rank 1
  t.kernel(0, "k", 0, 0, 10);
  t.kernel(1, "k", 0, 0, 10);
  RankMap m = map_ranks(t.p);
  ASSERT_EQ(m.units.size(), 2u);
  EXPECT_EQ(m.units[0].input, 0u);
  EXPECT_EQ(m.units[0].rank, 0);
  EXPECT_FALSE(m.units[0].rank_from_input);
  ASSERT_EQ(m.warnings.size(), 1u);
}

// The bug of issue 17: the launches of all GPUs were one timeline, so two GPUs each busy
// half the time looked fully busy.
TEST(Ranks, WholeRunTimelineIsPerGpuNotMerged) {
  TwoRanks t;
  t.p.inputs.resize(1);
  t.p.inputs[0].distributed.reset();
  t.kernel(0, "k", 0, 0, 50);    // GPU 0: busy [0,50) of [0,100)
  t.kernel(0, "k", 0, 75, 25);
  t.kernel(0, "k", 1, 50, 50);   // GPU 1: busy [50,100) of [0,100)
  t.kernel(0, "k", 1, 0, 25);
  Aggregate agg = aggregate(t.p, test::builtin_classifier());
  ASSERT_FALSE(agg.stages.empty());
  const StageRow& whole = agg.stages.front();
  EXPECT_EQ(whole.name, kWholeRunStage);
  EXPECT_EQ(*whole.wall_ns, 200);  // two lanes of 100 ns
  EXPECT_EQ(*whole.busy_ns, 150);
  EXPECT_DOUBLE_EQ(*whole.busy_fraction(), 0.75);
  ASSERT_EQ(agg.lane_coverages.size(), 2u);  // per GPU
  ASSERT_TRUE(agg.lane_coverages[0] && agg.lane_coverages[1]);
  EXPECT_EQ(agg.lane_coverages[0]->busy_ns, 75);
  EXPECT_EQ(agg.lane_coverages[1]->busy_ns, 75);
  // One rank: its identity only, no figures of its own (they are the profile's, above).
  RankAnalysis a = analyze_ranks(t.p, agg);
  ASSERT_EQ(a.ranks.size(), 1u);
  EXPECT_FALSE(a.multi_rank());
  EXPECT_EQ(a.ranks[0].rank, 0);
  EXPECT_TRUE(a.ranks[0].lanes.empty());
  EXPECT_EQ(a.ranks[0].launches, 0u);
}

// A launch's unit and lane: per launch where there are several, none written where there is one
// (lane_of and unit_of answer 0), interleaved runs of inputs and devices included.
TEST(Ranks, EachLaunchHasItsUnitAndLaneAndOneLaneKeepsNoListOfThem) {
  TwoRanks t;
  t.kernel(1, "k", 0, 0, 10);
  t.kernel(1, "k", 0, 10, 10);
  const LaneMap one = map_rank_lanes(t.p);
  ASSERT_EQ(one.ranks.units.size(), 1u);
  ASSERT_EQ(one.lanes.lanes.size(), 1u);
  EXPECT_TRUE(one.ranks.unit_of_launch.empty());
  EXPECT_TRUE(one.lanes.lane_of_launch.empty());
  EXPECT_EQ(one.ranks.unit_of(1), 0u);
  EXPECT_EQ(one.lanes.lane_of(1), 0u);

  t.kernel(0, "k", 1, 0, 10);   // input 0 says rank 1: unit 1
  t.kernel(1, "k", -1, 20, 5);  // no device: a lane of its own in unit 0
  t.kernel(0, "k", 1, 30, 10);
  t.kernel(0, "k", 2, 30, 10);
  const LaneMap many = map_rank_lanes(t.p);
  ASSERT_EQ(many.ranks.units.size(), 2u);
  EXPECT_EQ(many.ranks.units[0].input, 1u);
  const std::vector<std::uint32_t> units{0, 0, 1, 0, 1, 1};
  ASSERT_EQ(many.lanes.lanes.size(), 4u);
  for (std::size_t i = 0; i < t.p.launches.size(); ++i) {
    EXPECT_EQ(many.ranks.unit_of(i), units[i]) << i;
    const Lanes::Lane& lane = many.lanes.lanes[many.lanes.lane_of(i)];
    EXPECT_EQ(lane.unit, units[i]) << i;
    EXPECT_EQ(lane.device, t.p.launches[i].device_ordinal) << i;
  }
  EXPECT_NE(many.lanes.lane_of(4), many.lanes.lane_of(5));
}

// The lanes' figures are worked out once, with the stage figures, and the rank analysis reads
// them from the aggregate: the same as worked out again from the launches (kernels out of
// start order in a lane, overlapping ones, a gap, and a memcpy that is no kernel).
TEST(Ranks, LaneFiguresFromTheAggregateAreThoseOfTheLaunches) {
  TwoRanks t;
  t.kernel(0, "k", 0, 100, 50);
  t.kernel(0, "k", 0, 0, 40);
  t.kernel(0, "k", 0, 20, 40);  // overlaps the one before: busy [0,60), then [100,150)
  t.kernel(1, "k", 1, 10, 5);
  model::Launch copy;
  copy.kind = model::LaunchKind::kMemcpy;
  copy.name = t.p.names.intern("Memcpy HtoD (Pageable -> Device)");
  copy.start_ns = 500;
  copy.duration_ns = 100;
  copy.device_ordinal = 0;  // on lane 0, whose kernels' figures it does not change
  t.p.launches.push_back(copy);
  Aggregate agg = aggregate(t.p, test::builtin_classifier());
  ASSERT_EQ(agg.lane_coverages.size(), 2u);
  ASSERT_TRUE(agg.lane_coverages[0] && agg.lane_coverages[1]);
  EXPECT_EQ(agg.lane_coverages[0]->busy_ns, 110);
  EXPECT_EQ(agg.lane_coverages[0]->wall_ns, 150);
  EXPECT_EQ(agg.lane_coverages[0]->gaps.count, 1u);
  EXPECT_EQ(agg.lane_coverages[0]->gaps.largest_ns, 40);
  const RankAnalysis shared = analyze_ranks(t.p, agg);
  agg.lane_coverages.clear();  // as an aggregate made without them: worked out again
  const RankAnalysis own = analyze_ranks(t.p, agg);
  ASSERT_EQ(shared.ranks.size(), own.ranks.size());
  for (std::size_t r = 0; r < shared.ranks.size(); ++r) {
    ASSERT_EQ(shared.ranks[r].lanes.size(), 1u);
    ASSERT_EQ(own.ranks[r].lanes.size(), 1u);
    const LaneRow& a = shared.ranks[r].lanes[0];
    const LaneRow& b = own.ranks[r].lanes[0];
    EXPECT_EQ(a.busy_ns, b.busy_ns);
    EXPECT_EQ(a.wall_ns, b.wall_ns);
    EXPECT_EQ(a.gaps.count, b.gaps.count);
    EXPECT_EQ(a.gaps.total_ns, b.gaps.total_ns);
    EXPECT_EQ(shared.ranks[r].busy_ns, own.ranks[r].busy_ns);
  }
}

// Real traces of two ranks of one NCCL job (Holistic Trace Analysis's test data): ranks from
// "distributedInfo", each rank's kernel time the sum of its kernels' durations, exactly.
TEST(Ranks, HtaTwoRankTracesKernelTimeIsTheSumOfTheRanksKernels) {
  model::Profile p;
  ASSERT_TRUE(ingest::read_input(test::fixture("multirank/hta_sendrecv_rank-1.json.gz"), p));
  ASSERT_TRUE(ingest::read_input(test::fixture("multirank/hta_sendrecv_rank-0.json.gz"), p));
  ASSERT_TRUE(p.inputs[0].distributed);
  EXPECT_EQ(p.inputs[0].distributed->rank, 1);
  EXPECT_EQ(p.inputs[0].distributed->world_size, 128);
  EXPECT_EQ(p.inputs[0].distributed->backend, "nccl");
  RankAnalysis a = analyze_ranks(p, aggregate(p, test::builtin_classifier()));
  ASSERT_EQ(a.ranks.size(), 2u);
  std::map<std::uint32_t, double> by_input;
  for (const auto& l : p.launches) {
    if (l.kind == model::LaunchKind::kKernel) by_input[l.input] += *l.duration_ns;
  }
  EXPECT_EQ(a.ranks[0].rank, 0);
  EXPECT_EQ(a.ranks[0].kernel_time_ns, by_input[1]);
  EXPECT_EQ(a.ranks[1].kernel_time_ns, by_input[0]);
  EXPECT_GT(a.ranks[0].comm.comm_ns, 0);
  ASSERT_FALSE(a.ranks[0].collectives.empty());
  EXPECT_EQ(a.ranks[0].collectives[0].kind, "send/recv");
}

TEST(Ranks, PytorchCollectiveMessageSizeFromArgs) {
  auto r = test::read_fixture("multirank/hta_nccl_allreduce_rank-0.json.gz");
  ASSERT_TRUE(r.status);
  bool sized = false;
  for (const auto& l : r.profile.launches) {
    const auto& name = r.profile.names[l.name];
    if (name.rfind("ncclKernel_AllReduce", 0) == 0 && l.bytes == 6637568 * 4) sized = true;
  }
  EXPECT_TRUE(sized);  // "In msg nelems": 6637568, "dtype": "Float"
}

}  // namespace
}  // namespace kernlens::analysis

namespace kernlens::analysis {
namespace {

// Ranks that disagree on the GPU: an A100 trace (HTA) and an H100 trace, both GPU 0.
TEST(Ranks, GpusThatDisagreeAcrossInputsAreReported) {
  model::Profile p;
  ASSERT_TRUE(ingest::read_input(test::fixture("multirank/hta_nccl_allreduce_rank-0.json.gz"), p));
  ASSERT_TRUE(ingest::read_input(test::fixture("multirank/tp_gloo_rank-1.json.gz"), p));
  ASSERT_EQ(p.inputs.size(), 2u);
  EXPECT_TRUE(p.inputs[0].warnings.empty());
  bool reported = false;
  for (const auto& w : p.inputs[1].warnings) {
    reported = reported || (w.to_string().find("GPU 0 is a NVIDIA H100 80GB HBM3 here but a NVIDIA A100") !=
                            std::string::npos);
  }
  EXPECT_TRUE(reported);
}

}  // namespace
}  // namespace kernlens::analysis
