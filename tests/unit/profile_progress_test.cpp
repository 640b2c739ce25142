// ncu's console lines (real ones, tests/fixtures/ncu_logs and ncu/) into events, and the
// deep pass's progress text for a terminal and for a log.
#include "kernlens/profile/progress.h"

#include <gtest/gtest.h>

#include <sstream>

#include "test_util.h"

namespace kernlens::profile {
namespace {

std::vector<NcuEvent> parse_log(const std::string& fixture) {
  std::istringstream in(test::fixture_bytes(fixture));
  std::vector<NcuEvent> events;
  for (std::string line; std::getline(in, line);) {
    for (auto& e : parse_ncu_line(line)) events.push_back(std::move(e));
  }
  return events;
}

TEST(ParseNcuLine, ProfilingLine) {
  auto events = parse_ncu_line(
      "==PROF== Profiling \"indexSelectSmallIndex\" - 0: 0%....50%....100% - 10 passes");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, NcuEventKind::kProfiling);
  EXPECT_EQ(events[0].kernel, "indexSelectSmallIndex");
  EXPECT_EQ(events[0].launch, 0);
  EXPECT_EQ(events[0].passes, 10);
}

TEST(ParseNcuLine, NamesWithSpacesParenthesesAndEllipsis) {
  auto demo = parse_ncu_line(
      "==PROF== Profiling \"demo::fill(float *, int, float)\" - 1: 0%....50%....100% - 11 passes");
  ASSERT_EQ(demo.size(), 1u);
  EXPECT_EQ(demo[0].kernel, "demo::fill(float *, int, float)");
  EXPECT_EQ(demo[0].launch, 1);
  EXPECT_EQ(demo[0].passes, 11);
  auto cut = parse_ncu_line(
      "==PROF== Profiling \"nvjet_sm90_tst_128x64_64x8_1x...\" - 0: 0%....50%....100% - 27 passes");
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].kernel, "nvjet_sm90_tst_128x64_64x8_1x...");
  EXPECT_EQ(cut[0].passes, 27);
}

TEST(ParseNcuLine, QwenDecodeLogIncludingTheInterruptedKernel) {
  auto events = parse_log("ncu_logs/qwen_decode_trimmed.log");
  std::vector<NcuEventKind> kinds;
  for (const auto& e : events) kinds.push_back(e.kind);
  using K = NcuEventKind;
  EXPECT_EQ(kinds, (std::vector<K>{K::kWarning, K::kConnected, K::kProfiling, K::kProfiling,
                                   K::kProfiling, K::kProfiling, K::kProfiling, K::kProfiling,
                                   K::kProfiling, K::kProfiling, K::kOtherProf, K::kError,
                                   K::kOtherProf, K::kError, K::kReport}));
  EXPECT_EQ(events[1].pid, 10249);
  // "0%....==PROF== Trying to shutdown": the kernel started and never finished.
  EXPECT_EQ(events[9].kernel, "vectorized_elementwise_kernel");
  EXPECT_EQ(events[9].launch, 396);
  EXPECT_FALSE(events[9].passes.has_value());
  EXPECT_EQ(events[10].text, "Trying to shutdown target application");
  EXPECT_EQ(events[11].text,
            "Failed to profile \"vectorized_elementwise_kernel\" in process 10249");
  EXPECT_EQ(events[14].text, "/tmp/cap/qwen_decode.ncu-rep");
}

TEST(ParseNcuLine, FullQwenLogCountsEveryFinishedKernel) {
  int finished = 0, started = 0;
  for (const auto& e : parse_log("ncu/ncu_qwen_decode_stdout.log")) {
    if (e.kind != NcuEventKind::kProfiling) continue;
    ++started;
    if (e.passes) ++finished;
  }
  EXPECT_EQ(started, 397);  // launches 0..396
  EXPECT_EQ(finished, 396);
}

// ncu 2025.3.1 with -o prints no launch number ("NAME": ...), as in the real deep pass of
// the llama prefill run; under --kernel-id the name is the id "CONTEXT:STREAM:NAME:N"
// (scripts/device/ncu_filter_probe.sh on the H100).
TEST(ParseNcuLine, ReportRunsAndKernelIds) {
  int finished = 0;
  std::string first;
  for (const auto& e : parse_log("profile_run/llama_prefill/deep/deep_1.stdout.log")) {
    if (e.kind != NcuEventKind::kProfiling || !e.passes) continue;
    if (finished++ == 0) first = e.kernel;
    EXPECT_EQ(e.passes, 25);
    EXPECT_FALSE(e.launch.has_value());
  }
  EXPECT_EQ(finished, 27);
  EXPECT_TRUE(first.starts_with("_ZN2at6native18elementwise_kernelILi128ELi4E")) << first;
  std::vector<std::string> kernels;
  for (const auto& e : parse_log("ncu_logs/filter_probe/id_regex_3.txt")) {
    if (e.kind == NcuEventKind::kProfiling && e.passes == 1) kernels.push_back(e.kernel);
  }
  EXPECT_EQ(kernels, (std::vector<std::string>{"kA", "kB", "kC"}));
  // Only the exact id shape loses its parts.
  EXPECT_EQ(parse_ncu_line("==PROF== Profiling \"1:7:ns::f:x\": 0%....50%....100% - 1 pass")[0].kernel,
            "1:7:ns::f:x");
}

TEST(ParseNcuLine, NoKernelsProfiled) {
  auto events = parse_log("ncu_logs/no_kernel_matched_small.log");
  ASSERT_EQ(events.size(), 3u);  // the kernel list and the program's output are not ncu's
  EXPECT_EQ(events[0].kind, NcuEventKind::kConnected);
  EXPECT_EQ(events[0].pid, 16154);
  EXPECT_EQ(events[1].kind, NcuEventKind::kDisconnected);
  EXPECT_EQ(events[1].pid, 16154);
  EXPECT_EQ(events[2].kind, NcuEventKind::kNoKernelsProfiled);
}

TEST(ParseNcuLine, ProgramOutputIsNoEvent) {
  EXPECT_TRUE(parse_ncu_line("model=gpt2 batch=4 prompt=256 new=2 wall_s=0.9046").empty());
  EXPECT_TRUE(parse_ncu_line(" - 3 passes").empty());
  EXPECT_TRUE(parse_ncu_line("").empty());
}

NcuEvent finished(std::string kernel) {
  return NcuEvent{NcuEventKind::kProfiling, std::move(kernel), 0, 10, {}, {}};
}

TEST(DeepProgress, TerminalRedrawsInPlace) {
  DeepProgress bar(3, /*tty=*/true);
  // Mangled names, as ncu prints them under --kernel-name-base mangled, show as base names.
  EXPECT_EQ(bar.on_event(finished("_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_7MeanOpsIffffEEjfLi4ELi4EEE"
                                  "EEvT1_"),
                         1.24),
            "\rncu: 1/3 kernels, 1.2s: at::reduce_kernel<mean>");
  // A shorter line blanks what the longer one left.
  EXPECT_EQ(bar.on_event(finished("Kernel2"), 75),
            "\rncu: 2/3 kernels, 1:15: Kernel2" + std::string(16, ' '));
  EXPECT_EQ(bar.on_event(NcuEvent{NcuEventKind::kConnected, {}, {}, {}, 1, {}}, 76), "");
  EXPECT_EQ(bar.done(), 2u);
  std::string end = bar.finish(80);
  EXPECT_EQ(end.front(), '\r');
  EXPECT_EQ(end.back(), '\n');
  EXPECT_NE(end.find("2/3 kernels, 1:20 (short of the plan)"), std::string::npos) << end;
}

// Issue 24: a run that profiled nothing is not "done".
TEST(DeepProgress, SaysDoneOnlyWhenEveryPlannedKernelWasProfiled) {
  DeepProgress nothing(4, /*tty=*/false);
  EXPECT_EQ(nothing.finish(409), "ncu: 0/4 kernels, 6:49 (nothing profiled)\n");
  DeepProgress all(1, /*tty=*/false);
  all.on_event(finished("k"), 1);
  EXPECT_EQ(all.finish(2), "ncu: 1/1 kernels, 2.0s (done)\n");
  DeepProgress stopped(2, /*tty=*/false);
  stopped.on_event(finished("k"), 1);
  EXPECT_EQ(stopped.finish(2, /*ended_early=*/true), "ncu: 1/2 kernels, 2.0s (stopped)\n");
}

TEST(DeepProgress, PlainLinesWhenNotATerminal) {
  DeepProgress bar(2, /*tty=*/false);
  NcuEvent started = finished("nvjet_sm90_tst_176x128_64x5_1x2_h_bz_TNN");
  started.passes.reset();
  EXPECT_EQ(bar.on_event(started, 0.5), "");  // only finished kernels make a line
  EXPECT_EQ(bar.on_event(finished("nvjet_sm90_tst_176x128_64x5_1x2_h_bz_TNN"), 3),
            "ncu: 1/2 kernels, 3.0s: nvjet_sm90_tst_176x128_64x5_1x2_h_bz_TNN\n");
  EXPECT_EQ(bar.finish(3725), "ncu: 1/2 kernels, 1:02:05 (short of the plan)\n");
}

}  // namespace
}  // namespace kernlens::profile
