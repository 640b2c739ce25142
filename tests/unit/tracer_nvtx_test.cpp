// The tracer's NVTX side, for real: tests/tracer/nvtx_probe (a program that uses NVTX and no
// CUDA) runs with NVTX_INJECTION64_PATH naming libkernlens_tracer.so, and the .kltrace it leaves
// must hold every range with its name, domain, kind and thread. NVTX needs no GPU, so this runs
// wherever the tracer is built (CUPTI found); CI has no CUPTI and skips it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "kernlens/format/kltrace.h"
#include "test_util.h"

namespace tf = kernlens::trace_format;

namespace {

#if defined(KERNLENS_TRACER_SO) && defined(KERNLENS_NVTX_PROBE)

std::string read_all(const std::filesystem::path& p) {
  std::string bytes;
  std::FILE* f = std::fopen(p.c_str(), "rb");
  if (!f) return bytes;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) bytes.append(buf, n);
  std::fclose(f);
  return bytes;
}

TEST(TracerNvtx, RecordsEveryKindOfRangeFromTheProgramsNvtx) {
  kernlens::test::TempDir dir;
  const std::string command = "NVTX_INJECTION64_PATH=" KERNLENS_TRACER_SO " KERNLENS_TRACE_DIR=" + dir.path().string() +
                              " " KERNLENS_NVTX_PROBE;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u) << "one file: the forked child writes none";
  tf::TraceData t;
  tf::DecodeError err;
  ASSERT_TRUE(tf::decode(read_all(files[0]), t, err)) << err.what;

  std::map<std::string, tf::RangeRecord> by_name;
  for (const auto& r : t.ranges) by_name[t.strings[r.name]] = r;
  ASSERT_EQ(by_name.size(), 6u) << "outer, inner, step, request, worker, still open at exit";
  const auto& outer = by_name.at("outer");
  const auto& inner = by_name.at("inner");
  EXPECT_EQ(outer.kind, tf::RangeKind::kPushPop);
  EXPECT_EQ(t.strings[outer.domain], "");
  EXPECT_LE(outer.start_ns, inner.start_ns);
  EXPECT_LE(inner.end_ns, outer.end_ns);
  EXPECT_EQ(outer.thread, inner.thread);

  const auto& step = by_name.at("step");
  EXPECT_EQ(t.strings[step.domain], "engine") << "a registered string in a created domain";

  const auto& request = by_name.at("request");
  const auto& worker = by_name.at("worker");
  EXPECT_EQ(request.kind, tf::RangeKind::kStartEnd);
  EXPECT_EQ(request.thread, outer.thread) << "a start/end range belongs to the thread that started it";
  EXPECT_NE(worker.thread, outer.thread);
  EXPECT_LE(request.start_ns, worker.start_ns);
  EXPECT_LE(request.end_ns, worker.end_ns);

  EXPECT_EQ(by_name.at("still open at exit").end_ns, tf::kOpenEnd);
  EXPECT_EQ(by_name.count("in the child"), 0u);
  EXPECT_TRUE(t.kernels.empty());
  EXPECT_EQ(t.process.pid, std::stoul(files[0].filename().string().substr(9)));
  EXPECT_NE(t.strings[t.process.command_line].find("nvtx_probe"), std::string::npos);
}

#else

TEST(TracerNvtx, RecordsEveryKindOfRangeFromTheProgramsNvtx) {
  GTEST_SKIP() << "the tracer is not built here (no CUPTI or NVTX headers; CI has none)";
}

#endif

}  // namespace
