// The .kltrace format: files written with the tracer's own writer (format/kltrace.h, the code
// the tracer links; not the CUPTI part, which needs a GPU) read back through the public
// reader: launches, devices, NVTX stages projected like nsys, damaged and truncated files,
// the Chrome trace export, and how `profile` finds and runs the tracer.
#include "kernlens/ingest/kltrace/reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "kernlens/ingest/registry.h"
#include "kernlens/profile/tracer_command.h"
#include "kernlens/rundir/layout.h"
#include "kernlens/tracer/chrome_trace.h"
#include "kernlens/format/kltrace.h"
#include "test_util.h"
#include "tools/kltrace_fixture.h"

namespace kernlens {
namespace {

namespace tf = trace_format;

std::string encoded() { return tf::encode(test::small_decode_trace()); }

TEST(Kltrace, DetectedByItsMagic) {
  auto d = ingest::guess_format(encoded());
  ASSERT_NE(d.format, nullptr) << d.why;
  EXPECT_EQ(d.format->id, model::InputFormat::kKltrace);
}

TEST(Kltrace, WriterAndReaderRoundTripEveryField) {
  const tf::TraceData in = test::small_decode_trace();
  tf::TraceData out;
  tf::DecodeError err;
  ASSERT_TRUE(tf::decode(tf::encode(in), out, err)) << err.what << " at " << err.offset;
  EXPECT_EQ(out.strings, in.strings);
  ASSERT_EQ(out.kernels.size(), in.kernels.size());
  const auto& k = out.kernels[3];
  EXPECT_EQ(k.name, in.kernels[3].name);
  EXPECT_EQ(k.grid, in.kernels[3].grid);
  EXPECT_EQ(k.block, in.kernels[3].block);
  EXPECT_EQ(k.dynamic_shared_bytes, 49152u);
  EXPECT_EQ(k.start_ns, in.kernels[3].start_ns);
  EXPECT_EQ(out.memops.size(), in.memops.size());
  EXPECT_EQ(out.memops[0].bytes, 65536u);
  EXPECT_EQ(out.ranges.back().end_ns, tf::kOpenEnd);
  EXPECT_EQ(out.devices[0].global_memory_bytes, in.devices[0].global_memory_bytes);
  EXPECT_EQ(out.process.pid, 4242u);
}

TEST(Kltrace, NamesAreStoredOnce) {
  const tf::TraceData t = test::small_decode_trace();
  const std::string bytes = tf::encode(t);
  const std::string& gemm = t.strings[t.kernels[0].name];
  std::size_t count = 0;
  for (auto at = bytes.find(gemm); at != std::string::npos; at = bytes.find(gemm, at + 1)) ++count;
  EXPECT_EQ(count, 1u);
}

TEST(Kltrace, LaunchesDevicesAndStagesAsTheNsysReaderGivesThem) {
  auto r = test::read_bytes(encoded(), "t.kltrace");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const auto& p = r.profile;
  ASSERT_EQ(p.launches.size(), 14u);
  std::map<std::string, int> by_stage;
  int kernels = 0, memsets = 0, memcpys = 0;
  for (const auto& l : p.launches) {
    ++by_stage[test::stage_of(p, l)];
    kernels += l.kind == model::LaunchKind::kKernel;
    memsets += l.kind == model::LaunchKind::kMemset;
    memcpys += l.kind == model::LaunchKind::kMemcpy;
  }
  EXPECT_EQ(kernels, 10);
  EXPECT_EQ(memsets, 2);
  EXPECT_EQ(memcpys, 2);
  EXPECT_EQ(by_stage["prefill"], 6);
  EXPECT_EQ(by_stage["decode [llm@step]"], 6);
  EXPECT_EQ(by_stage[""], 1);          // the copy before any range
  EXPECT_EQ(by_stage["teardown"], 1);  // the open range, ended with the trace
  auto first_copy = std::find_if(p.launches.begin(), p.launches.end(),
                                 [](const model::Launch& l) { return l.kind == model::LaunchKind::kMemcpy; });
  ASSERT_NE(first_copy, p.launches.end());
  EXPECT_EQ(p.names[first_copy->name], "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(first_copy->bytes, 65536);
  ASSERT_EQ(p.devices.size(), 1u);
  EXPECT_EQ(p.devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(p.devices[0].cc, "9.0");
  EXPECT_EQ(p.devices[0].sm_count, 132);
  EXPECT_EQ(p.processes[p.launches[0].process].pid, 4242);
  EXPECT_EQ(p.processes[p.launches[0].process].name, "python3");
  const auto& warnings = p.inputs[0].warnings;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].message.find("never end"), std::string::npos);
}

// A correlation id with two API calls (the runtime call and the driver call inside it, starting
// on the same clock tick) takes the inner one, the first to end, as the nsys reader does: a
// range that holds only the driver call holds the launch.
TEST(Kltrace, TheInnerOfTwoCallsOfALaunchPlacesIt) {
  tf::TraceData t = test::small_decode_trace();
  const tf::ApiCallRecord runtime = t.api_calls[1];  // the first prefill kernel's
  ASSERT_EQ(runtime.correlation, t.kernels[0].correlation);
  t.api_calls.push_back(tf::ApiCallRecord{runtime.correlation, runtime.thread, runtime.start_ns, runtime.start_ns + 1'000});
  tf::StringInterner strings(t.strings);
  t.ranges.push_back(tf::RangeRecord{0, strings.intern("driver"), tf::RangeKind::kPushPop, runtime.thread,
                                     runtime.start_ns - 500, runtime.start_ns + 2'000});
  auto r = test::read_bytes(tf::encode(t), "t.kltrace");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  std::map<std::string, int> by_stage;
  for (const auto& l : r.profile.launches) {
    if (l.kind == model::LaunchKind::kKernel) ++by_stage[test::stage_of(r.profile, l)];
  }
  EXPECT_EQ(by_stage["prefill/driver"], 1);
  EXPECT_EQ(by_stage["prefill"], 5);
}

// A real capture: the tracer on the H100 under `kernlens profile --discovery tracer` (llama-like
// model, batch 1, prompt 128, 8 decode steps; examples/data/README.md). The PyTorch profiler's
// trace of the same program has 342 prefill and 22,400 decode launches for 64 decode steps
// (BENCHMARKS.md): 342 and 8 x 350 here.
TEST(Kltrace, RealH100CaptureHasEveryLaunchInItsStage) {
  auto r = test::read_fixture("../../examples/data/runs/llama_decode_tracer/discovery/kernlens-551.kltrace");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const auto& p = r.profile;
  std::map<std::string, int> kernels_by_stage;
  int memcpys = 0, memsets = 0;
  for (const auto& l : p.launches) {
    kernels_by_stage[test::stage_of(p, l)] += l.kind == model::LaunchKind::kKernel;
    memcpys += l.kind == model::LaunchKind::kMemcpy;
    memsets += l.kind == model::LaunchKind::kMemset;
  }
  EXPECT_EQ(kernels_by_stage["prefill"], 342);
  EXPECT_EQ(kernels_by_stage["decode"], 2800);
  EXPECT_EQ(kernels_by_stage[""], 1) << "one kernel before the first range (model setup)";
  EXPECT_EQ(memcpys, 77);
  EXPECT_EQ(memsets, 10);
  ASSERT_EQ(p.devices.size(), 1u);
  EXPECT_EQ(p.devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(p.devices[0].sm_count, 132);
  EXPECT_EQ(p.processes[p.launches[0].process].name, "python3");
  EXPECT_TRUE(p.inputs[0].warnings.empty());
  for (const auto& l : p.launches) {
    if (l.kind == model::LaunchKind::kKernel && test::stage_of(p, l) == "decode") {
      EXPECT_GT(l.thread_id, 0u) << "every staged kernel has its launching thread";
      break;
    }
  }
}

TEST(Kltrace, EveryTruncationIsAnErrorWithItsOffset) {
  const std::string bytes = encoded();
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    auto r = test::read_bytes(bytes.substr(0, cut), "cut.kltrace");
    ASSERT_FALSE(r.status.ok()) << "cut at " << cut;
    if (cut < tf::kHeaderBytes) continue;  // too short to be recognised
    EXPECT_NE(r.status.error().message.find("at byte"), std::string::npos) << r.status.error().message;
  }
  auto r = test::read_bytes(bytes.substr(0, bytes.size() - 10), "cut.kltrace");
  EXPECT_NE(r.status.error().message.find("truncated NVTX range section"), std::string::npos)
      << r.status.error().message;
}

TEST(Kltrace, DamageIsReportedNotTrusted) {
  std::string newer = encoded();
  newer[8] = 9;  // version 9
  auto r = test::read_bytes(newer, "v9.kltrace");
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.error().message.find("version 9"), std::string::npos);
  // A kernel whose name id points past the string table.
  tf::TraceData t = test::small_decode_trace();
  t.kernels[0].name = 100000;
  r = test::read_bytes(tf::encode(t), "bad.kltrace");
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.error().message.find("a kernel name refers to string 100000"), std::string::npos);
  // A kernel that ends before it starts.
  t = test::small_decode_trace();
  t.kernels[1].end_ns = t.kernels[1].start_ns - 1;
  r = test::read_bytes(tf::encode(t), "bad.kltrace");
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.error().message.find("kernel 1 ends"), std::string::npos);
}

TEST(Kltrace, LongerRecordsOfALaterVersionAreReadByTheirPrefix) {
  // Version 1 with kernel records grown by 8 bytes (as a later writer may append fields).
  const tf::TraceData t = test::small_decode_trace();
  std::string grown = tf::encode(t);
  // Rebuild the kernel section by hand: header + records with 8 extra bytes each.
  std::string section;
  tf::detail::Out out(section);
  tf::detail::section_header(out, tf::SectionId::kKernels, tf::kKernelRecordBytes + 8, t.kernels.size(),
                             (tf::kKernelRecordBytes + 8) * t.kernels.size());
  for (auto k : t.kernels) {
    tf::detail::fields(out, k);
    out.pad(8);
  }
  std::string plain;
  tf::detail::records_section(plain, tf::SectionId::kKernels, tf::kKernelRecordBytes, t.kernels);
  auto at = grown.find(plain);
  ASSERT_NE(at, std::string::npos);
  grown.replace(at, plain.size(), section);
  tf::TraceData back;
  tf::DecodeError err;
  ASSERT_TRUE(tf::decode(grown, back, err)) << err.what;
  EXPECT_EQ(back.kernels.size(), t.kernels.size());
  EXPECT_EQ(back.kernels.back().end_ns, t.kernels.back().end_ns);
}

TEST(Kltrace, CommittedFixtureIsWhatTheWriterMakes) {
  EXPECT_EQ(test::fixture_bytes("kltrace/decode_small.kltrace"), encoded())
      << "rewrite it: build/tests/make_kltrace_fixture tests/fixtures/kltrace/decode_small.kltrace";
}

TEST(Kltrace, ChromeTraceIsJsonWithEveryEvent) {
  const tf::TraceData t = test::small_decode_trace();
  auto doc = nlohmann::json::parse(tf::chrome_trace_json(t));
  const auto& events = doc["traceEvents"];
  EXPECT_EQ(events.size(), t.kernels.size() + t.memops.size() + t.ranges.size());
  EXPECT_EQ(events[0]["ph"], "X");
  EXPECT_EQ(events[0]["name"], t.strings[t.kernels[0].name]);
  EXPECT_EQ(events[0]["cat"], "kernel");
  EXPECT_DOUBLE_EQ(events[0]["dur"].get<double>(), 40.0);  // 40'000 ns in us
}

TEST(TracerCommand, EnvironmentPointsCudaAndNvtxAtTheTracer) {
  profile::TracerPaths paths{"/opt/k/lib/libkernlens_tracer.so"};
  EXPECT_EQ(profile::tracer_environment(paths, "/runs/r1/discovery"),
            (std::vector<std::string>{"CUDA_INJECTION64_PATH=/opt/k/lib/libkernlens_tracer.so",
                                      "NVTX_INJECTION64_PATH=/opt/k/lib/libkernlens_tracer.so",
                                      "KERNLENS_TRACE_DIR=/runs/r1/discovery"}));
}

TEST(TracerCommand, FindsTheLibraryBesideKernlensOrInLib) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.path() / "bin");
  std::filesystem::create_directories(dir.path() / "lib");
  auto missing = profile::locate_tracer("", dir.file("bin"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("--tracer"), std::string::npos);
  dir.write("lib/libkernlens_tracer.so", "x");
  auto found = profile::locate_tracer("", dir.file("bin"));
  ASSERT_TRUE(found.ok()) << found.error().to_string();
  EXPECT_EQ(found->library, dir.file("lib/libkernlens_tracer.so"));
  dir.write("bin/libkernlens_tracer.so", "x");  // beside kernlens comes first
  EXPECT_EQ(profile::locate_tracer("", dir.file("bin"))->library, dir.file("bin/libkernlens_tracer.so"));
}

TEST(RunDirLayout, TracerExportsAreTheKltraceFilesInNameOrder) {
  test::TempDir dir;
  for (const char* name : {"kernlens-20.kltrace", "kernlens-3.kltrace", "kernlens-3.kltrace.tmp", "other.kltrace"}) {
    dir.write(name, "x");
  }
  EXPECT_EQ(rundir::discovery_exports_in(dir.path(), rundir::discovery_layout(rundir::DiscoveryMethod::kTracer)),
            (std::vector<std::string>{dir.file("kernlens-20.kltrace"), dir.file("kernlens-3.kltrace")}));
}

}  // namespace
}  // namespace kernlens
