#include "kernlens/ingest/csv/scanner.h"

#include "kernlens/common/simd.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace kernlens::ingest {
namespace {

std::vector<std::vector<std::string>> all_records(std::string_view data, std::vector<bool>* closed = nullptr,
                                                  std::vector<std::int64_t>* lines = nullptr) {
  CsvScanner scanner(data);
  CsvRecord rec;
  std::vector<std::vector<std::string>> out;
  while (scanner.next(rec)) {
    out.emplace_back(rec.fields.begin(), rec.fields.end());
    if (closed) closed->push_back(rec.closed);
    if (lines) lines->push_back(rec.line);
  }
  return out;
}

using Rows = std::vector<std::vector<std::string>>;

// A line of 200,000 fields keeps the first kMaxFields: memory per record is bounded, and the
// records after it are read as usual.
TEST(CsvScanner, AVeryWideRecordKeepsABoundedNumberOfFields) {
  const std::string wide = "a" + std::string(200000, ',') + "\nx,y\n";
  for (bool selected : {false, true}) {
    CsvScanner scanner(wide);
    if (selected) scanner.select_fields({0, 1, 150000});
    CsvRecord rec;
    ASSERT_TRUE(scanner.next(rec));
    EXPECT_EQ(rec.fields.size(), CsvScanner::kMaxFields);
    EXPECT_EQ(rec.fields[0], "a");
    ASSERT_TRUE(scanner.next(rec));
    EXPECT_EQ(rec.line, 2);
    ASSERT_GE(rec.fields.size(), 2u);
    EXPECT_EQ(rec.fields[1], "y");
  }
}

// With fields selected, a record has the width and the selected fields' text of a full scan:
// rows of every width (shorter than a selected index too), quoted commas and line breaks,
// fields that cross the 64-byte blocks (CTest's unit_scanners_portable_simd runs it on the
// portable path too).
TEST(CsvScanner, SelectedFieldsReadAsAFullScanReadsThem) {
  std::mt19937 rng(7);
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const std::string many_commas(40, ',');
  const std::vector<std::string> cells = {"", "7", "\"a,b\"", "\"x\ny\"", "\"q \"\"z\"\"\"", std::string(70, 'w'),
                                          "\"" + many_commas + "\"", "12.5"};
  std::string data;
  for (int row = 0; row < 300; ++row) {
    const std::size_t width = 1 + pick(90);
    for (std::size_t f = 0; f < width; ++f) {
      if (f > 0) data += ',';
      data += cells[pick(cells.size())];
    }
    data += row % 7 == 0 ? "\r\n" : "\n";
  }
  const std::vector<std::vector<std::size_t>> selections = {{0}, {3, 4, 60}, {1, 2, 3, 5, 8, 13, 21, 34, 55, 89}, {80}};
  for (const auto& selected : selections) {
    CsvScanner full(data), some(data);
    some.select_fields(selected);
    CsvRecord a, b;
    std::size_t records = 0;
    while (full.next(a)) {
      ASSERT_TRUE(some.next(b));
      ASSERT_EQ(b.fields.size(), a.fields.size()) << "record " << records;
      ASSERT_EQ(b.line, a.line);
      for (std::size_t i : selected) {
        if (i < a.fields.size()) {
          ASSERT_EQ(b.fields[i], a.fields[i]) << "record " << records << " field " << i;
        }
      }
      ++records;
    }
    EXPECT_FALSE(some.next(b));
    EXPECT_EQ(records, 300u);
  }
}

TEST(CsvScanner, QuotedFieldsWithCommasAndDoubledQuotes) {
  EXPECT_EQ(all_records("\"ID\",\"Value\"\n\"0\",\"2,589,629.63\"\n\"1\",\"a \"\"b\"\" c\"\n"),
            (Rows{{"ID", "Value"}, {"0", "2,589,629.63"}, {"1", "a \"b\" c"}}));
}

TEST(CsvScanner, NcuNvtxCellKeepsInnerQuotes) {
  // Real cell from an ncu raw page: the NVTX state quotes each range.
  std::string line =
      "\"10249  \"\"<default domain>:decode:none:none:none:none:none:none\"\" \",\"x\"\n";
  EXPECT_EQ(all_records(line),
            (Rows{{"10249  \"<default domain>:decode:none:none:none:none:none:none\" ", "x"}}));
}

TEST(CsvScanner, CrlfAndLfLineEnds) {
  EXPECT_EQ(all_records("a,b\r\nc,d\ne,f"), (Rows{{"a", "b"}, {"c", "d"}, {"e", "f"}}));
  EXPECT_EQ(all_records("\"a\",\"b\"\r\n\"c\",\"d\"\r\n"), (Rows{{"a", "b"}, {"c", "d"}}));
  // A lone CR is data (no exporter we read ends lines with it).
  EXPECT_EQ(all_records("e,f\rg,h\n"), (Rows{{"e", "f\rg", "h"}}));
}

TEST(CsvScanner, RecordsSpanningManyBlocks) {
  // Fields and quoted regions that cross the scanner's 64-byte blocks, including a
  // quoted line break and doubled quotes right at a block edge.
  std::string long_field(150, 'x');
  std::string data = "\"" + long_field + "\",b\n\"" + std::string(61, 'y') + "\"\"z\nq\",c\n" + long_field + "\n";
  std::vector<std::int64_t> lines;
  auto rows = all_records(data, nullptr, &lines);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{long_field, "b"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{std::string(61, 'y') + "\"z\nq", "c"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{long_field}));
  EXPECT_EQ(lines, (std::vector<std::int64_t>{1, 2, 4}));
}

TEST(CsvScanner, MatchesASimpleReferenceOnEveryPrefixOfARealExport) {
  // Cutting a real file at every length exercises every block boundary and a truncated
  // last record; the fields must equal a byte-at-a-time reference parser's.
  std::string data = "\"ID\",\"Name\",\"V\"\n\"\",\"\",\"ns\"\r\n\"0\",\"a \"\"q\"\" b\",\"5,056\"\n"
                     "\"1\",\"649  \"\"<default domain>:step:none\"\" \",\"12.128000\"\n,,\n";
  for (std::size_t n = 0; n <= data.size(); ++n) {
    std::string_view cut(data.data(), n);
    // Reference: RFC 4180 by hand.
    std::vector<std::vector<std::string>> want;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false, any = false;
    for (std::size_t i = 0; i < cut.size(); ++i) {
      char c = cut[i];
      any = true;
      if (quoted) {
        if (c == '"' && i + 1 < cut.size() && cut[i + 1] == '"') { field += '"'; ++i; }
        else if (c == '"') quoted = false;
        else field += c;
      } else if (c == '"') quoted = true;
      else if (c == ',') { row.push_back(field); field.clear(); }
      else if (c == '\n') {
        if (!field.empty() && field.back() == '\r') field.pop_back();
        row.push_back(field); field.clear(); want.push_back(row); row.clear(); any = false;
      } else field += c;
    }
    if (any) { row.push_back(field); want.push_back(row); }
    EXPECT_EQ(all_records(cut), want) << "prefix of " << n << " bytes";
  }
}

TEST(CsvScanner, EmptyFieldsAndTrailingComma) {
  EXPECT_EQ(all_records(",\"\",x,\n"), (Rows{{"", "", "x", ""}}));
}

TEST(CsvScanner, RaggedRowsAreKeptAsTheyAre) {
  EXPECT_EQ(all_records("a,b,c,d\n1,2\n1,2,3,4,5\n"), (Rows{{"a", "b", "c", "d"}, {"1", "2"}, {"1", "2", "3", "4", "5"}}));
}

TEST(CsvScanner, LineNumbersCountBreaksInsideQuotes) {
  std::vector<std::int64_t> lines;
  auto rows = all_records("h1,h2\n\"multi\nline\",x\nlast,y\n", nullptr, &lines);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][0], "multi\nline");
  EXPECT_EQ(lines, (std::vector<std::int64_t>{1, 2, 4}));
}

TEST(CsvScanner, DataEndingInsideQuotesIsAnOpenRecord) {
  std::vector<bool> closed;
  auto rows = all_records("\"a\",\"b\"\n\"c\",\"trunc", &closed);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(closed, (std::vector<bool>{true, false}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"c", "trunc"}));
}

TEST(CsvScanner, LastLineWithoutNewlineIsComplete) {
  std::vector<bool> closed;
  auto rows = all_records("a,b\n\"c\",\"d\"", &closed);
  EXPECT_EQ(rows, (Rows{{"a", "b"}, {"c", "d"}}));
  EXPECT_EQ(closed, (std::vector<bool>{true, true}));
}

TEST(CsvScanner, TextAfterClosingQuoteStaysInTheField) {
  EXPECT_EQ(all_records("\"ab\"c,d\n"), (Rows{{"abc", "d"}}));
}

TEST(CsvScanner, PeekAndSkipLines) {
  CsvScanner scanner("==PROF== Connected\r\n\"ID\"\n");
  EXPECT_EQ(scanner.peek_line(), "==PROF== Connected");
  scanner.skip_line();
  EXPECT_EQ(scanner.line(), 2);
  CsvRecord rec;
  ASSERT_TRUE(scanner.next(rec));
  EXPECT_EQ(rec.line, 2);
  EXPECT_EQ(rec.fields[0], "ID");
  EXPECT_FALSE(scanner.next(rec));
}

TEST(CsvScanner, StripBom) {
  EXPECT_EQ(strip_bom("\xEF\xBB\xBF\"ID\""), "\"ID\"");
  EXPECT_EQ(strip_bom("\"ID\""), "\"ID\"");
  EXPECT_EQ(strip_bom("\xEF\xBB"), "\xEF\xBB");
}

TEST(NcuConsoleLine, RecognisesProfilerLinesOnly) {
  EXPECT_TRUE(is_ncu_console_line("==PROF== Connected to process 649 (/tmp/cap/nvtx_demo)"));
  EXPECT_TRUE(is_ncu_console_line("==WARNING== No kernels were profiled."));
  EXPECT_TRUE(is_ncu_console_line("==ERROR== The application returned an error code (1)."));
  EXPECT_FALSE(is_ncu_console_line("\"ID\",\"Process ID\""));
  EXPECT_FALSE(is_ncu_console_line("== not a tag"));
  EXPECT_FALSE(is_ncu_console_line("====="));
  EXPECT_FALSE(is_ncu_console_line("==prof== lower case"));
}

// The wide paths are taken where the CPU has them, and never under KERNLENS_SIMD=portable,
// which unit_scanners_portable_simd sets to run the scanners' tests on the portable path.
TEST(Simd, WidePathsOnlyWhereTheCpuHasThemAndNotWhenPortableIsAsked) {
#if KERNLENS_HAVE_X86_DISPATCH
  const bool cpu_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul") &&
                        __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi") &&
                        __builtin_cpu_supports("bmi2");
  EXPECT_EQ(cpu_has_avx2(), cpu_avx2 && !simd_forced_portable());
  if (simd_forced_portable()) {
    EXPECT_FALSE(cpu_has_avx512());
  }
  if (cpu_has_avx512()) {
    EXPECT_TRUE(cpu_has_avx2());
  }
#else
  GTEST_SKIP() << "this build has no x86 SIMD dispatch: the portable path is the only one";
#endif
}

}  // namespace
}  // namespace kernlens::ingest
