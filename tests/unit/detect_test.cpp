#include "kernlens/ingest/detect.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace kernlens::ingest {
namespace {

std::string detected(const std::string& bytes) {
  Detection d = detect_format(bytes);
  return d.format ? std::string(d.format->id) : "unknown: " + d.why;
}

TEST(Detect, EveryNcuFixtureByContent) {
  const std::pair<const char*, const char*> cases[] = {
      {"ncu/qwen_decode_raw.csv", "ncu-raw-csv"},
      {"ncu/demo_raw_dynamic.csv", "ncu-raw-csv"},
      {"ncu/demo_live_raw_stdout.csv", "ncu-raw-csv"},
      {"ncu/qwen_decode_details.csv.gz", "ncu-details-csv"},
      {"ncu/demo_details_all.csv.gz", "ncu-details-csv"},
      {"ncu/qwen_decode_summary.csv", "ncu-summary-csv"},
      {"ncu/demo_summary_gpu.csv", "ncu-summary-csv"},
  };
  for (const auto& [file, id] : cases) EXPECT_EQ(detected(test::fixture_bytes(file)), id) << file;
}

TEST(Detect, PytorchTraceByTraceEventsNearTheStart) {
  EXPECT_EQ(detected(test::fixture_bytes("pytorch/llama_torch_trace.json.gz")), "pytorch-trace");
  EXPECT_EQ(detected("\xEF\xBB\xBF \n{\"traceEvents\": []}"), "pytorch-trace");
  // Only the first MiB is looked at: a trace is not scanned whole to be recognised.
  EXPECT_EQ(detected("{\"x\": \"" + std::string(1 << 20, 'a') + "\", \"traceEvents\": []}").substr(0, 8), "unknown:");
}

TEST(Detect, RejectsWhatIsNotAnExport) {
  // Every SQLite file goes to the nsys reader, which says what a non-nsys database lacks.
  EXPECT_EQ(detected(std::string("SQLite format 3\0rest", 20)), "nsys-sqlite");
  EXPECT_NE(detected(std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10)).find("binary file"), std::string::npos);
  EXPECT_NE(detected("name,value\nfoo,1\n").find("no CSV header with a 'Kernel Name' column"), std::string::npos);
  EXPECT_NE(detected("{\"schemaVersion\": 1}").find("a JSON document without \"traceEvents\""), std::string::npos);
  EXPECT_NE(detected("[{\"ph\": \"X\"}]").find("not a PyTorch profiler trace"), std::string::npos);
  // The ncu log of a run that profiled nothing is not an export either.
  EXPECT_NE(detected(test::fixture_bytes("ncu/ncu_no_kernel_matched_stdout.log")).find("no CSV header"),
            std::string::npos);
}

TEST(Detect, NcuHeaderWithoutKernelNameNamesTheColumnAndLine) {
  Detection d = detect_format("==PROF== Disconnected\n\"ID\",\"Process ID\",\"Name\"\n\"0\",\"1\",\"x\"\n");
  EXPECT_EQ(d.format, nullptr);
  EXPECT_EQ(d.line, 2);
  EXPECT_NE(d.why.find("missing column 'Kernel Name'"), std::string::npos);
}

}  // namespace
}  // namespace kernlens::ingest

namespace kernlens::ingest {
namespace {

TEST(Detect, FirstLineWithDoubledQuotesDoesNotOutliveItsScanner) {
  // Found by fuzz_read_any: the first line's fields were views into a dead scanner.
  Detection d = detect_format(test::fixture_bytes("regressions/detect_first_csv_line_uaf.csv"));
  EXPECT_EQ(d.format, nullptr);
  EXPECT_EQ(d.line, 1);
  EXPECT_NE(d.why.find("missing column 'Kernel Name'"), std::string::npos);
}

}  // namespace
}  // namespace kernlens::ingest
