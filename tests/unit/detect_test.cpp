#include "kernlens/ingest/registry.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.h"

namespace kernlens::ingest {
namespace {

std::string detected(const std::string& bytes) {
  Detection d = guess_format(bytes);
  return d.format ? std::string(model::format_id(d.format->id)) : "unknown: " + d.why;
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

// The registry is the one list of formats: every id but the run directory's (load/ reads
// those) has exactly one entry, with a detector, a reader and words for people.
TEST(Registry, EveryFormatIsOneEntry) {
  using model::InputFormat;
  for (auto id : {InputFormat::kNcuRawCsv, InputFormat::kNcuDetailsCsv, InputFormat::kNcuSummaryCsv,
                  InputFormat::kNsysSqlite, InputFormat::kNsysStatsCsv, InputFormat::kPytorchTrace,
                  InputFormat::kKltrace}) {
    const FormatEntry* f = find_format(id);
    ASSERT_NE(f, nullptr) << model::format_id(id);
    EXPECT_EQ(std::count_if(formats().begin(), formats().end(), [&](const FormatEntry& e) { return e.id == id; }), 1);
    EXPECT_NE(f->detect, nullptr);
    EXPECT_NE(f->read, nullptr);
    EXPECT_FALSE(f->description.empty());
    EXPECT_FALSE(f->expected.empty());
    EXPECT_FALSE(model::format_id(id).empty());
  }
  EXPECT_EQ(find_format(InputFormat::kRunDirectory), nullptr);
  EXPECT_EQ(formats().size(), 7u);
}

// The error for a file of no known format lists what each entry expects, family by family.
TEST(Registry, ExpectedFormatsComeFromTheEntries) {
  const std::string expected = expected_formats();
  for (const auto& f : formats()) EXPECT_NE(expected.find(f.expected), std::string::npos) << f.expected;
  EXPECT_EQ(expected.find("an Nsight Compute CSV export"), std::string("expected ").size());
  EXPECT_LT(expected.find("an nsys SQLite export"), expected.find("a PyTorch profiler trace"));
  EXPECT_TRUE(expected.ends_with(" or a kernlens tracer trace (.kltrace)")) << expected;
  EXPECT_NE(detected(std::string("\x7f" "ELF\0", 5)).find(expected), std::string::npos);
}

// An nsys stats file of several reports may hold a "Kernel Name" column (cuda_kern_exec_trace)
// beside the kernel summary: it is read as nsys's, not as an ncu page.
TEST(Registry, NsysStatsBeforeNcuPages) {
  EXPECT_EQ(detected("\"Start (ns)\",\"Kernel Name\"\n1,k\n\n\"Time (%)\",\"Total Time (ns)\",\"Instances\",\"Name\"\n"
                     "100,5,1,k\n"),
            "nsys-stats-csv");
}

// --help's list and the unknown-file error come from the entries: a format added to kFormats
// appears in both without another edit.
TEST(Registry, HelpAndErrorTextListEveryEntry) {
  const std::string help = formats_help();
  const std::string expected = expected_formats();
  for (const FormatEntry& f : formats()) {
    EXPECT_NE(help.find(std::string(f.description) + ": " + std::string(f.produce)), std::string::npos) << help;
    EXPECT_NE(expected.find(f.expected), std::string::npos) << expected;
    EXPECT_EQ(find_format(f.id), &f);
  }
  EXPECT_EQ(static_cast<std::size_t>(std::count(help.begin(), help.end(), '\n')), formats().size());
}

TEST(Detect, NcuHeaderWithoutKernelNameNamesTheColumnAndLine) {
  Detection d = guess_format("==PROF== Disconnected\n\"ID\",\"Process ID\",\"Name\"\n\"0\",\"1\",\"x\"\n");
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
  Detection d = guess_format(test::fixture_bytes("regressions/detect_first_csv_line_uaf.csv"));
  EXPECT_EQ(d.format, nullptr);
  EXPECT_EQ(d.line, 1);
  EXPECT_NE(d.why.find("missing column 'Kernel Name'"), std::string::npos);
}

}  // namespace
}  // namespace kernlens::ingest
