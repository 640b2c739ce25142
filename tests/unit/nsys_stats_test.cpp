// The `nsys stats` kernel summary reader: real cuda_gpu_kern_sum output of Nsight Systems
// 2025.3.1 (plain, :base, :nvtx-name, --timeunit usec, cuda_gpu_kern_gb_sum), the 2020 layout
// (constructed from the same numbers, see tests/fixtures/nsys/README.md), and damaged files.
#include "kernlens/ingest/nsys/stats.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "kernlens/ingest/registry.h"
#include "test_util.h"

namespace kernlens {
namespace {

using test::fixture_bytes;
using test::read_bytes;
using test::read_fixture;

constexpr const char* kSaxpy = "saxpy(double *, double *, double *, double, int)";

// The one row every saxpy summary holds: 5 instances, 88,573,480 ns in all.
void expect_saxpy(const std::string& fixture, const std::string& name,
                  const std::string& stage = "") {
  auto r = read_fixture("nsys/" + fixture);
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const auto& p = r.profile;
  EXPECT_EQ(p.inputs[0].format, model::InputFormat::kNsysStatsCsv);
  ASSERT_EQ(p.launches.size(), 1u) << fixture;
  const model::Launch& l = p.launches[0];
  EXPECT_EQ(p.names[l.name], name) << fixture;
  EXPECT_EQ(l.count, 5u);
  EXPECT_EQ(*l.duration_ns, 17714696);
  EXPECT_EQ(*l.total_duration_ns(), 88573480) << fixture;
  EXPECT_FALSE(l.start_ns);  // a summary has no timeline
  EXPECT_EQ(model::push_pop_path(p.stages[l.stage]), stage);
}

TEST(NsysStats, RealKernelSummaries) {
  expect_saxpy("saxpy_stats_cuda_gpu_kern_sum.csv", kSaxpy);
  expect_saxpy("saxpy_stats_cuda_gpu_kern_sum_base.csv", "saxpy");
  expect_saxpy("saxpy_stats_cuda_gpu_kern_sum_nvtx-name.csv", kSaxpy, "saxpy");
}

TEST(NsysStats, OlderAndOtherLayouts) {
  expect_saxpy("constructed_gpukernsum_2020.csv", kSaxpy);
  expect_saxpy("saxpy_stats_cuda_gpu_kern_sum_usec.csv", kSaxpy);
  expect_saxpy("saxpy_stats_cuda_gpu_kern_gb_sum.csv", kSaxpy);
  auto r = read_fixture("nsys/saxpy_stats_cuda_gpu_kern_gb_sum.csv");
  EXPECT_EQ(r.profile.config_of(r.profile.launches[0]).grid, (model::Dim3{2, 1, 1}));
  EXPECT_EQ(r.profile.config_of(r.profile.launches[0]).block, (model::Dim3{512, 1, 1}));
}

// Kernel launches and kernel time per stage: the one model both inputs fill.
std::map<std::string, std::pair<std::uint64_t, double>> per_stage(const model::Profile& p) {
  std::map<std::string, std::pair<std::uint64_t, double>> out;
  for (const auto& l : p.launches) {
    if (l.kind != model::LaunchKind::kKernel) continue;  // the database has memsets too
    auto& [launches, ns] = out[model::push_pop_path(p.stages[l.stage])];
    launches += l.count;
    ns += *l.total_duration_ns();
  }
  return out;
}

// nsys's own cuda_gpu_kern_sum:nvtx-name of llama_stages.sqlite (its NVTX projection, not
// ours) gives the stages kernlens finds in the database: prefill 342 launches, decode 5250.
TEST(NsysStats, NvtxNameSummaryAgreesWithTheDatabase) {
  auto stats = read_fixture("nsys/llama_stages_stats_cuda_gpu_kern_sum_nvtx-name.csv");
  ASSERT_TRUE(stats.status.ok()) << stats.status.error().to_string();
  auto db = read_fixture("nsys/llama_stages.sqlite");
  ASSERT_TRUE(db.status.ok()) << db.status.error().to_string();
  auto from_stats = per_stage(stats.profile);
  EXPECT_EQ(from_stats, per_stage(db.profile));
  EXPECT_EQ(from_stats["prefill"], (std::pair<std::uint64_t, double>{342, 1698964}));
  EXPECT_EQ(from_stats["decode"], (std::pair<std::uint64_t, double>{5250, 13006514}));
}

TEST(NsysStats, DetectedByContentAndToldApartFromOtherReports) {
  for (const char* f : {"saxpy_stats_cuda_gpu_kern_sum.csv", "constructed_gpukernsum_2020.csv",
                        "saxpy_stats_cuda_gpu_kern_gb_sum.csv"}) {
    ingest::Detection d = ingest::guess_format(fixture_bytes(std::string("nsys/") + f));
    ASSERT_NE(d.format, nullptr) << f;
    EXPECT_EQ(d.format->id, model::InputFormat::kNsysStatsCsv);
  }
  auto nvtx = read_fixture("nsys/saxpy_stats_nvtx_sum.csv");
  ASSERT_FALSE(nvtx.status.ok());
  EXPECT_NE(nvtx.status.error().message.find("nsys stats output without a kernel summary"),
            std::string::npos);
  auto skipped = read_fixture("nsys/saxpy_stats_cuda_gpu_mem_time_sum.csv");
  ASSERT_FALSE(skipped.status.ok());
  EXPECT_NE(skipped.status.error().message.find(
                "SKIPPED: work_saxpy-mpi-cuda_nsys2022.2.sqlite does not contain "
                "ENUM_CUDA_MEMCPY_OPER table."),
            std::string::npos);
  // nsys 2025 no longer knows "gpukernsum": its output is the preamble alone.
  EXPECT_FALSE(read_fixture("nsys/saxpy_stats_gpukernsum_unknown_to_nsys2025.csv").status.ok());
}

TEST(NsysStats, NvtxNameSplitsAtTheLastSlashOutsideBrackets) {
  using ingest::split_nvtx_name;
  using Split = std::optional<std::pair<std::string_view, std::string_view>>;
  EXPECT_EQ(split_nvtx_name("saxpy/saxpy(double *, int)"),
            (Split{{"saxpy", "saxpy(double *, int)"}}));
  EXPECT_EQ(split_nvtx_name("decode/layer_0/void f<std::divides<float>, 2/1>(float*)"),
            (Split{{"decode/layer_0", "void f<std::divides<float>, 2/1>(float*)"}}));
  EXPECT_EQ(split_nvtx_name("step (1/2)/gemm"), (Split{{"step (1/2)", "gemm"}}));
  EXPECT_EQ(split_nvtx_name("void at::native::(anonymous namespace)::f<a/b>(int)"), std::nullopt);
  EXPECT_EQ(split_nvtx_name("nvjet_sm90_tst_64x8"), std::nullopt);
}

const std::string kPreamble =
    "Processing [r.sqlite] with [/opt/nvidia/nsight-systems/reports/cuda_gpu_kern_sum.py]... \n";
const std::string kHeader =
    "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n";

TEST(NsysStats, NamesAreNotSplitWhenThePreambleShowsNoNvtxName) {
  auto r = read_bytes(kPreamble + kHeader + "100.0,10,2,5.0,5.0,4,6,1.4,a/b\n");
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.profile.names[r.profile.launches[0].name], "a/b");
  EXPECT_EQ(r.profile.launches[0].stage, 0u);
  auto split =
      read_bytes("Processing [r.sqlite] with [/x/cuda_gpu_kern_sum.py](nvtx-name:base)... \n" +
                 kHeader + "100.0,10,2,5.0,5.0,4,6,1.4,decode/gemm\n");
  ASSERT_TRUE(split.status.ok());
  EXPECT_EQ(split.profile.names[split.profile.launches[0].name], "gemm");
  EXPECT_EQ(model::push_pop_path(split.profile.stages[split.profile.launches[0].stage]), "decode");
}

TEST(NsysStats, TableEndsAtTheNextReport) {
  auto r = read_bytes(
      kPreamble + kHeader + "100.0,10,2,5.0,5.0,4,6,1.4,k\n" +
      "Processing [r.sqlite] with [/x/nvtx_sum.py]... \nTime (%),Total Time (ns),Range\n1,2,x\n");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  EXPECT_EQ(r.profile.launches.size(), 1u);
}

TEST(NsysStats, BadCellsNameTheLineAndColumn) {
  auto bad_time = read_bytes(kPreamble + kHeader + "100.0,lots,2,5.0,5.0,4,6,1.4,k\n");
  ASSERT_FALSE(bad_time.status.ok());
  EXPECT_EQ(bad_time.status.error().line, 3);
  EXPECT_EQ(bad_time.status.error().message, "column 'Total Time': expected a time, got 'lots'");
  auto zero = read_bytes(kPreamble + kHeader + "100.0,10,0,5.0,5.0,4,6,1.4,k\n");
  ASSERT_FALSE(zero.status.ok());
  EXPECT_EQ(zero.status.error().message,
            "column 'Instances': expected a positive integer below 2^32, got '0'");
  // A row stands for at most 2^32 - 1 instances (a launch's 32-bit count), not a wrapped number.
  auto wide = read_bytes(kPreamble + kHeader + "100.0,10,4294967296,5.0,5.0,4,6,1.4,k\n");
  ASSERT_FALSE(wide.status.ok());
  EXPECT_EQ(wide.status.error().message,
            "column 'Instances': expected a positive integer below 2^32, got '4294967296'");
  auto unit = read_bytes("Time (%),Total Time (furlongs),Instances,Name\n1,2,3,k\n");
  ASSERT_FALSE(unit.status.ok());
  EXPECT_EQ(unit.status.error().line, 1);
  auto empty = read_bytes(kPreamble + kHeader);
  ASSERT_FALSE(empty.status.ok());
  EXPECT_EQ(empty.status.error().message, "no kernels after the header row");
  auto grid = read_bytes(
      "Total Time (ns),Instances,GridXYZ,BlockXYZ,Name\n10,1,   2    1,  32    1    1,k\n");
  ASSERT_FALSE(grid.status.ok());
  EXPECT_EQ(grid.status.error().message, "column 'GridXYZ': expected three integers, got '2    1'");
}

TEST(NsysStats, TruncatedLastRowWarns) {
  auto r = read_bytes(kPreamble + kHeader +
                      "60.0,10,2,5.0,5.0,4,6,1.4,k\n40.0,7,1,7.0,7.0,7,7,0.0,\"void f(int");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  EXPECT_EQ(r.profile.launches.size(), 1u);
  ASSERT_EQ(r.profile.inputs[0].warnings.size(), 1u);
  EXPECT_EQ(r.profile.inputs[0].warnings[0].line, 4);
}

}  // namespace
}  // namespace kernlens
