// The three Nsight Compute CSV readers on real H100 exports, and on those exports damaged
// in the ways files get damaged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernlens/ingest/ncu/raw.h"
#include "kernlens/ingest/reconcile.h"
#include "test_util.h"

namespace kernlens {
namespace {

using test::fixture_bytes;
using test::read_bytes;
using test::read_fixture;

std::string name_of(const model::Profile& p, const model::Launch& l) { return p.names[l.name]; }

std::optional<double> metric(const model::Profile& p, const model::Launch& l, std::string_view name) {
  auto id = p.metrics.find(name);
  if (!id) return std::nullopt;
  const model::MetricSample* m = p.find_metric(l, *id);
  return m ? std::optional<double>(m->value) : std::nullopt;
}

double total_duration(const model::Profile& p) {
  double t = 0;
  for (const auto& l : p.launches) t += l.total_duration_ns().value_or(0);
  return t;
}

// Replaces the first occurrence of `from` after byte `after`.
std::string replace_once(std::string s, const std::string& from, const std::string& to, std::size_t after = 0) {
  std::size_t at = s.find(from, after);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

std::size_t line_start(const std::string& s, int line) {  // 1-based
  std::size_t at = 0;
  for (int i = 1; i < line; ++i) at = s.find('\n', at) + 1;
  return at;
}

// ---- raw page ---------------------------------------------------------------------------

TEST(NcuRaw, QwenDecodeLaunchFieldsAndDevice) {
  auto r = read_fixture("ncu/qwen_decode_raw.csv");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const auto& p = r.profile;
  EXPECT_EQ(p.inputs[0].format, model::InputFormat::kNcuRawCsv);
  ASSERT_EQ(p.launches.size(), 396u);
  const model::Launch& l = p.launches[0];
  EXPECT_EQ(name_of(p, l).substr(0, 44), "void at::<unnamed>::indexSelectSmallIndex<c1");
  EXPECT_EQ(l.id, 0);
  const model::LaunchConfig& c = p.config_of(l);
  EXPECT_EQ(c.grid, (model::Dim3{8, 1, 1}));
  EXPECT_EQ(c.block, (model::Dim3{128, 1, 1}));
  EXPECT_EQ(c.registers_per_thread, 32);
  EXPECT_EQ(c.static_shared_bytes, 0);
  EXPECT_EQ(c.dynamic_shared_bytes, 0);
  EXPECT_EQ(l.stream_id, 7);
  EXPECT_EQ(l.context_id, 1);
  EXPECT_EQ(l.thread_id, 10249);
  EXPECT_EQ(l.device_ordinal, 0);
  EXPECT_EQ(l.count, 1u);
  ASSERT_TRUE(l.duration_ns);
  EXPECT_EQ(*l.duration_ns, 5056);
  EXPECT_EQ(metric(p, l, "sm__throughput.avg.pct_of_peak_sustained_elapsed"), 0.24);
  EXPECT_EQ(p.metrics[*p.metrics.find("gpu__time_duration.sum")].unit, "ns");
  EXPECT_EQ(model::push_pop_path(p.stages[l.stage]), "decode");
  EXPECT_EQ(p.processes[l.process].pid, 10249);
  EXPECT_EQ(p.processes[l.process].name, "python3.12");
  EXPECT_EQ(p.launches.back().id, 395);

  ASSERT_EQ(p.devices.size(), 1u);
  const model::Device& d = p.devices[0];
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.cc, "9.0");
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_EQ(d.sm_clock_max_hz, 1.98e9);
  EXPECT_EQ(d.memory_clock_max_hz, 2.619e9);
  EXPECT_EQ(d.memory_bus_width_bits, 5120);
  EXPECT_EQ(d.l2_cache_bytes, 52428800);
  EXPECT_EQ(d.memory_total_bytes, 85017493504);
  EXPECT_TRUE(p.inputs[0].warnings.empty());
}

TEST(NcuRaw, DynamicUnitsEqualBaseUnits) {
  // The same report exported twice: `--page raw --csv` (us, Kbyte, Ghz) and with
  // `--print-units base` (ns, byte, hz). After conversion every metric must agree to the
  // precision printed (base prints two decimals, dynamic six significant ones).
  auto dyn = read_fixture("ncu/demo_raw_dynamic.csv");
  auto base = read_fixture("ncu/demo_raw_base.csv");
  ASSERT_TRUE(dyn.status.ok() && base.status.ok());
  ASSERT_EQ(dyn.profile.launches.size(), 18u);
  ASSERT_EQ(base.profile.launches.size(), 18u);
  int compared = 0;
  for (std::size_t i = 0; i < 18; ++i) {
    const auto& a = dyn.profile.launches[i];
    const auto& b = base.profile.launches[i];
    EXPECT_EQ(a.duration_ns, b.duration_ns);
    for (const auto& m : base.profile.metrics_of(b)) {
      const auto& info = base.profile.metrics[m.id];
      auto other = metric(dyn.profile, a, info.name);
      if (!other) continue;
      EXPECT_EQ(dyn.profile.metrics[*dyn.profile.metrics.find(info.name)].unit, info.unit) << info.name;
      double tol = std::max(0.0051, std::fabs(m.value) * 5e-4);
      EXPECT_NEAR(*other, m.value, tol) << info.name << " launch " << i;
      ++compared;
    }
  }
  EXPECT_GT(compared, 18 * 300);
}

TEST(NcuRaw, MetricInstanceListsKeepTheAggregate) {
  auto inst = read_fixture("ncu/demo_raw_instances.csv");  // --print-metric-instances values
  auto base = read_fixture("ncu/demo_raw_base.csv");
  ASSERT_TRUE(inst.status.ok() && base.status.ok());
  ASSERT_EQ(inst.profile.launches.size(), base.profile.launches.size());
  for (std::size_t i = 0; i < base.profile.launches.size(); ++i) {
    EXPECT_EQ(inst.profile.launches[i].duration_ns, base.profile.launches[i].duration_ns);
    EXPECT_EQ(metric(inst.profile, inst.profile.launches[i], "sass__inst_executed_per_opcode"),
              metric(base.profile, base.profile.launches[i], "sass__inst_executed_per_opcode"));
  }
  EXPECT_EQ(metric(inst.profile, inst.profile.launches[0], "sass__inst_executed_per_opcode"), 1835008);
}

TEST(NcuRaw, NvtxPushPopStartEndAndDomains) {
  auto r = read_fixture("ncu/demo_raw_base.csv");
  ASSERT_TRUE(r.status.ok());
  const auto& p = r.profile;
  auto path = [&](std::size_t i) { return model::push_pop_path(p.stages[p.launches[i].stage]); };
  EXPECT_EQ(path(0), "setup");
  EXPECT_EQ(path(2), "step/kernlens_demo@prefill");
  EXPECT_EQ(path(4), "step");
  EXPECT_EQ(path(5), "step/decode/layer0");
  EXPECT_EQ(path(17), "");
  const auto& io = p.stages[p.launches[4].stage].start_end;
  ASSERT_EQ(io.size(), 1u);
  EXPECT_EQ(io[0], (model::NvtxRange{"", "io", model::RangeKind::kStartEnd}));
}

TEST(NcuRaw, ConsoleLinesBeforeAndInsideTheCsv) {
  // ncu run straight to stdout: ==WARNING==/==PROF== lines and the program's own output
  // come before the header.
  auto r = read_fixture("ncu/demo_live_raw_stdout.csv");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  EXPECT_EQ(r.profile.launches.size(), 18u);
  // ...and console lines between rows are skipped too.
  std::string bytes = fixture_bytes("ncu/demo_raw_base.csv");
  bytes.insert(line_start(bytes, 5), "==PROF== Profiling \"saxpy\" - 2: 0%....50%....100% - 11 passes\r\n");
  auto mixed = read_bytes(bytes);
  ASSERT_TRUE(mixed.status.ok()) << mixed.status.error().to_string();
  EXPECT_EQ(mixed.profile.launches.size(), 18u);
}

TEST(NcuRaw, CrlfAndBomReadTheSame) {
  std::string bytes = fixture_bytes("ncu/demo_raw_base.csv");
  std::string crlf = "\xEF\xBB\xBF";
  for (char c : bytes) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  auto a = read_bytes(bytes);
  auto b = read_bytes(crlf);
  ASSERT_TRUE(a.status.ok() && b.status.ok()) << b.status.error().to_string();
  ASSERT_EQ(a.profile.launches.size(), b.profile.launches.size());
  for (std::size_t i = 0; i < a.profile.launches.size(); ++i) {
    EXPECT_EQ(a.profile.launches[i].duration_ns, b.profile.launches[i].duration_ns);
    EXPECT_EQ(a.profile.launches[i].metrics_count, b.profile.launches[i].metrics_count);
  }
  EXPECT_EQ(b.profile.stages.size(), a.profile.stages.size());
}

TEST(NcuRaw, WithoutUnitsRowNumbersAreBaseUnitsAndItSaysSo) {
  std::string bytes = fixture_bytes("ncu/demo_raw_base.csv");
  std::size_t second = line_start(bytes, 2), third = line_start(bytes, 3);
  bytes.erase(second, third - second);
  auto r = read_bytes(bytes);
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  ASSERT_EQ(r.profile.launches.size(), 18u);
  EXPECT_EQ(*r.profile.launches[0].duration_ns, 12128);
  ASSERT_EQ(r.profile.inputs[0].warnings.size(), 1u);
  EXPECT_EQ(r.profile.inputs[0].warnings[0].line, 2);
  EXPECT_NE(r.profile.inputs[0].warnings[0].message.find("no units row"), std::string::npos);
}

TEST(NcuRaw, TruncatedLastLineIsDroppedWithAWarning) {
  std::string bytes = fixture_bytes("ncu/qwen_decode_raw.csv");
  std::size_t last = line_start(bytes, 398);
  for (std::size_t cut : {last + 40, last + 2000, bytes.size() - 3}) {
    auto r = read_bytes(bytes.substr(0, cut));
    ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
    EXPECT_EQ(r.profile.launches.size(), 395u);
    ASSERT_EQ(r.profile.inputs[0].warnings.size(), 1u);
    EXPECT_EQ(r.profile.inputs[0].warnings[0].line, 398);
    EXPECT_NE(r.profile.inputs[0].warnings[0].message.find("truncated"), std::string::npos);
  }
  // The last row complete but without its newline is not truncated.
  auto whole = read_bytes(bytes.substr(0, bytes.size() - 1));
  ASSERT_TRUE(whole.status.ok());
  EXPECT_EQ(whole.profile.launches.size(), 396u);
  EXPECT_TRUE(whole.profile.inputs[0].warnings.empty());
}

struct BadInput {
  const char* what;
  std::string bytes;
  std::int64_t line;
  const char* message;
};

TEST(NcuRaw, BadInputsFailWithFileAndLine) {
  std::string ok = fixture_bytes("ncu/qwen_decode_raw.csv");
  std::size_t row5 = line_start(ok, 5);
  std::string no_units = fixture_bytes("ncu/demo_raw_base.csv");
  const BadInput cases[] = {
      {"duration not a number", replace_once(ok, "\"5,056\"", "\"abc\""), 3,
       "column 'gpu__time_duration.avg': expected a number, got 'abc'"},
      {"decimal comma", replace_once(ok, "\"5,056\"", "\"5,05\""), 3, "expected a number, got '5,05'"},
      {"unit column not a number", replace_once(ok, "\"0.24\"", "\"high\""), 3,
       "expected a number, got 'high'"},
      {"row too short in the middle", ok.substr(0, row5) + "\"3\",\"10249\"\n" + ok.substr(row5), 5,
       "row has 2 fields, the header has 568"},
      {"a row of 100,000 fields", ok.substr(0, row5) + std::string(100000, ',') + "\n" + ok.substr(row5), 5,
       "row has 65536 fields, the header has 568"},
      {"bad grid", replace_once(ok, "\"(8, 1, 1)\"", "\"(8, x, 1)\""), 3,
       "column 'Grid Size': expected dimensions"},
      {"bad id", replace_once(ok, "\n\"0\",", "\n\"zero\","), 3, "column 'ID': expected an integer"},
      // A launch ID is kept in 32 bits (model::Id32): a wider or negative one is an error.
      {"id beyond 32 bits", replace_once(ok, "\n\"0\",", "\n\"4294967295\","), 3,
       "column 'ID': 4294967295 is no launch ID (0 to 2^32 - 2)"},
      {"negative id", replace_once(ok, "\n\"0\",", "\n\"-2\","), 3, "column 'ID': -2 is no launch ID"},
      // A launch keeps CUPTI's 32-bit stream id: a wider one is an error, not a wrapped number.
      {"stream beyond 32 bits", replace_once(ok, "\"1\",\"7\",\"(128, 1, 1)\"", "\"1\",\"4294967303\",\"(128, 1, 1)\""), 3,
       "column 'Stream': 4294967303 needs more than CUPTI's 32 bits"},
      {"empty kernel name",
       replace_once(ok, ",\"void at::<unnamed>::indexSelectSmallIndex<c10::BFloat16, long, unsigned int, 2, 2, "
                        "(int)-2>(cuda::TensorInfo<T1, T3>, cuda::TensorInfo<const T1, T3>, cuda::TensorInfo<const "
                        "T2, T3>, int, int, T3, long)\",",
                    ",\"\","),
       3, "empty 'Kernel Name'"},
      {"bad nvtx", replace_once(ok, "\"\"<default domain>:decode:none:none:none:none:none:none\"\"", "\"\"garbage\"\""), 3,
       "NVTX push/pop column"},
      {"header only", ok.substr(0, line_start(ok, 2)), 1, "header row"},
      {"cut in the header", ok.substr(0, 500), 1, "header row"},
      {"cut in the units row", ok.substr(0, line_start(ok, 2) + 100), 2, "units row"},
      {"negative duration",
       replace_once(no_units, "\"12,128\",\"12,128\",\"12,128\",\"12,128\"",
                    "\"-12,128\",\"-12,128\",\"-12,128\",\"-12,128\""),
       3, "column 'gpu__time_duration.sum': value -12,128 is out of range"},
      // Values no GPU produces are errors, not launches read with a made-up or missing time.
      {"duration of 1e26 ns",
       replace_once(no_units, "\"12,128\",\"12,128\",\"12,128\",\"12,128\"",
                    "\"12,128\",\"12,128\",\"12,128\",\"100,000,000,000,000,000,000,000,000\""),
       3, "column 'gpu__time_duration.sum': value 100,000,000,000,000,000,000,000,000 is out of range"},
      {"duration inf",
       replace_once(no_units, "\"12,128\",\"12,128\",\"12,128\",\"12,128\"",
                    "\"inf\",\"inf\",\"inf\",\"inf\""),
       3, "the launch's duration is 'inf', which no GPU measures"},
      {"duration nan",
       replace_once(no_units, "\"12,128\",\"12,128\",\"12,128\",\"12,128\"",
                    "\"nan\",\"nan\",\"nan\",\"nan\""),
       3, "the launch's duration is 'nan', which no GPU measures"},
      // One stray quote must not turn the rows after it into one field of a "truncated" row.
      {"stray quote on row 4",
       replace_once(no_units, "demo::", "de\"mo::", line_start(no_units, 4)),
       4, "a quote opened in this row is never closed"},
  };
  for (const auto& c : cases) {
    auto r = read_bytes(c.bytes, "in.csv");
    ASSERT_FALSE(r.status.ok()) << c.what;
    const Error& e = r.status.error();
    EXPECT_EQ(e.file, "in.csv") << c.what;
    EXPECT_EQ(e.line, c.line) << c.what << ": " << e.to_string();
    EXPECT_NE(e.message.find(c.message), std::string::npos) << c.what << ": " << e.to_string();
  }
}

// A launch whose duration ncu left without a value ("n/a") is kept without time; the warning
// counts such launches, so the loss is never silent.
TEST(NcuRaw, LaunchesWithoutADurationAreCounted) {
  std::string bytes = fixture_bytes("ncu/demo_raw_base.csv");
  bytes = replace_once(bytes, "\"12,128\",\"12,128\",\"12,128\",\"12,128\"", "\"n/a\",\"n/a\",\"n/a\",\"n/a\"");
  auto r = read_bytes(bytes, "in.csv");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const auto& warnings = r.profile.inputs[0].warnings;
  const std::string expected = "1 of " + std::to_string(r.profile.launches.size()) +
                               " launches have no duration in the export: they count as launches but add no time";
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].message, expected);
}

TEST(NcuRaw, MissingKernelNameColumnIsReportedAtTheHeader) {
  std::string bytes = replace_once(fixture_bytes("ncu/demo_raw_base.csv"), "\"Kernel Name\"", "\"Kernel\"");
  auto r = read_bytes(bytes, "in.csv");
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.error().to_string(), "in.csv:1: missing column 'Kernel Name' in the Nsight Compute CSV header");
}

TEST(NcuRaw, OnlySelectedMetricsAreDecoded) {
  ingest::ReadOptions only_sm;
  only_sm.all_metrics = false;
  only_sm.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  std::string bytes = fixture_bytes("ncu/qwen_decode_raw.csv");
  model::Profile p;
  ASSERT_TRUE(ingest::read_input_bytes(bytes, "q.csv", p, only_sm).ok());
  ASSERT_EQ(p.launches.size(), 396u);
  EXPECT_EQ(p.launches[0].metrics_count, 1u);
  EXPECT_EQ(metric(p, p.launches[0], "sm__throughput.avg.pct_of_peak_sustained_elapsed"), 0.24);
  EXPECT_EQ(*p.launches[0].duration_ns, 5056);  // launch fields are always read
  EXPECT_EQ(p.config_of(p.launches[0]).registers_per_thread, 32);
  EXPECT_EQ(p.devices.at(0).name, "NVIDIA H100 80GB HBM3");

  // A bad cell in a column nobody asked for is not read; in a wanted one it is an error.
  // (The first "0.24" of the file is in the column selected below.)
  std::string bad = replace_once(bytes, "\"0.24\"", "\"high\"");
  model::Profile quiet;
  ingest::ReadOptions none;
  none.all_metrics = false;
  EXPECT_TRUE(ingest::read_input_bytes(bad, "q.csv", quiet, none).ok());
  ingest::ReadOptions dram;
  dram.all_metrics = false;
  dram.metrics = {"dram__cycles_active.max.pct_of_peak_sustained_elapsed"};
  model::Profile loud;
  Status s = ingest::read_input_bytes(bad, "q.csv", loud, dram);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().to_string(),
            "q.csv:3: column 'dram__cycles_active.max.pct_of_peak_sustained_elapsed': expected a number, "
            "got 'high'");
}

TEST(NcuRaw, SizingThePoolAfterTheFirstRowKeepsItValid) {
  // Found by fuzz_ncu_raw: a reference to the first launch was used after reserve() moved it.
  // (ASan, in the sanitizer build, is what catches a regression; this pins the result.)
  auto r = read_fixture("regressions/raw_reserve_after_first_row.csv");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  ASSERT_EQ(r.profile.launches.size(), 1u);
  EXPECT_EQ(r.profile.launches[0].duration_ns, 4352);
}

TEST(NcuRaw, LaunchFieldsOutOfRangeAreErrors) {
  auto r = read_fixture("regressions/raw_launch_field_overflow.csv");  // found by fuzz_ncu_raw
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.error().line, 3);
  EXPECT_NE(r.status.error().message.find("'launch__registers_per_thread': value 1e30 is out of range"),
            std::string::npos)
      << r.status.error().to_string();
}

// The qwen raw page with its 396 rows repeated `times` (IDs kept: the reader does not care).
std::string repeated_qwen(int times) {
  std::string bytes = fixture_bytes("ncu/qwen_decode_raw.csv");
  std::size_t rows = line_start(bytes, 3);
  std::string out = bytes.substr(0, rows);
  for (int i = 0; i < times; ++i) out += bytes.substr(rows);
  return out;
}

void expect_same_launches(const model::Profile& a, const model::Profile& b) {
  ASSERT_EQ(a.launches.size(), b.launches.size());
  for (std::size_t i = 0; i < a.launches.size(); ++i) {
    const auto& x = a.launches[i];
    const auto& y = b.launches[i];
    ASSERT_EQ(a.names[x.name], b.names[y.name]) << i;
    EXPECT_EQ(x.duration_ns, y.duration_ns) << i;
    EXPECT_EQ(a.config_of(x), b.config_of(y)) << i;
    EXPECT_EQ(a.stages[x.stage], b.stages[y.stage]) << i;
    EXPECT_EQ(a.processes[x.process], b.processes[y.process]) << i;
    ASSERT_EQ(x.metrics_count, y.metrics_count) << i;
    for (std::uint32_t m = 0; m < x.metrics_count; ++m) {
      const auto& s = a.metrics_of(x)[m];
      const auto& t = b.metrics_of(y)[m];
      EXPECT_EQ(a.metrics[s.id].name, b.metrics[t.id].name);
      EXPECT_EQ(s.value, t.value);
    }
  }
}

// Reads `bytes` through a file and the streaming reader, with small chunks.
Status read_streamed(const std::string& bytes, model::Profile& p, std::size_t chunk, std::size_t carry,
                     const ingest::ReadOptions& options = {},
                     ingest::FileAccess access = ingest::FileAccess::kMapped) {
  test::TempDir dir;
  dir.write("in.csv", bytes);
  p.inputs.push_back(model::InputInfo{"in.csv", model::InputFormat::kNcuRawCsv, "", {}, {}});
  ingest::ReadContext ctx{"in.csv", p, 0, {}, &options};
  return ingest::read_ncu_raw_csv_file(dir.file("in.csv"), bytes.size(), ctx, chunk, carry, access);
}

TEST(NcuRawStream, ChunkedReadingEqualsReadingWhole) {
  std::string bytes = repeated_qwen(3);  // 1,188 launches, ~4.8 MB
  for (bool all_metrics : {true, false}) {
    ingest::ReadOptions options;
    options.all_metrics = all_metrics;
    model::Profile whole;
    ASSERT_TRUE(ingest::read_input_bytes(bytes, "in.csv", whole, options).ok());
    for (std::size_t chunk : {4093u, 65536u, 1u << 20}) {
      model::Profile streamed;
      Status s = read_streamed(bytes, streamed, chunk, 1 << 16, options);
      ASSERT_TRUE(s.ok()) << s.error().to_string();
      EXPECT_EQ(streamed.launches.size(), 1188u);
      expect_same_launches(whole, streamed);
      ASSERT_EQ(streamed.devices.size(), 1u);
      EXPECT_EQ(streamed.devices[0].name, "NVIDIA H100 80GB HBM3");
    }
  }
}

TEST(NcuRawStream, ErrorsAndWarningsKeepTheirLineNumbers) {
  std::string bytes = repeated_qwen(4);  // rows at lines 3 .. 1586
  std::string bad = bytes;
  std::size_t row = line_start(bad, 1500);
  bad.replace(row, bad.find(',', row) - row, "\"x\"");  // that row's ID
  model::Profile p;
  Status s = read_streamed(bad, p, 10007, 1 << 16);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().to_string(), "in.csv:1500: column 'ID': expected an integer, got 'x'");

  model::Profile cut;
  ASSERT_TRUE(read_streamed(bytes.substr(0, bytes.size() - 100), cut, 10007, 1 << 16).ok());
  EXPECT_EQ(cut.launches.size(), 396u * 4 - 1);
  ASSERT_EQ(cut.inputs[0].warnings.size(), 1u);
  EXPECT_EQ(cut.inputs[0].warnings[0].line, 1586);
}

TEST(NcuRawStream, QuotedLineBreaksAndConsoleLinesAtChunkEdges) {
  // A line break inside a quoted cell of every row (launch__tpc_enabled "all", a text
  // column) and ncu console lines between rows: chunk edges fall inside both.
  std::string bytes = repeated_qwen(2);
  std::size_t replaced = 0;
  for (std::size_t at = 0; (at = bytes.find(",\"all\",", at)) != std::string::npos; ++replaced) {
    bytes.replace(at, 7, ",\"a\nll\",");
  }
  ASSERT_EQ(replaced, 396u * 2);
  for (int line : {900, 600, 300}) {
    bytes.insert(line_start(bytes, line), "==PROF== Profiling \"saxpy\" - 2: 0%....50%....100% - 11 passes\n");
  }
  model::Profile whole;
  ASSERT_TRUE(ingest::read_input_bytes(bytes, "in.csv", whole).ok());
  EXPECT_EQ(whole.launches.size(), 792u);
  for (std::size_t chunk : {997u, 4096u, 40000u}) {
    model::Profile streamed;
    Status s = read_streamed(bytes, streamed, chunk, 1 << 16);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    expect_same_launches(whole, streamed);
  }
}

// Streamed, a row is held in the window's buffer, up to the carry; mapped, nothing is
// buffered and a row may be of any length (its windows grow), on one thread as on several.
TEST(NcuRawStream, RowsLongerThanTheCarryAreAnErrorOnlyWhenStreamed) {
  model::Profile streamed;  // the ~30 KB header fits the first chunk; the ~4 KB rows do not fit the carry
  Status s = read_streamed(repeated_qwen(1), streamed, 65536, 2048, {}, ingest::FileAccess::kStreamed);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("a record longer than 2048 bytes"), std::string::npos) << s.error().to_string();
  model::Profile whole;
  ASSERT_TRUE(ingest::read_input_bytes(repeated_qwen(1), "in.csv", whole).ok());
  for (unsigned threads : {1u, 3u}) {
    ingest::ReadOptions options;
    options.threads = threads;
    options.min_part_bytes = 1;
    model::Profile mapped;
    Status m = read_streamed(repeated_qwen(1), mapped, 65536, 2048, options);
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    expect_same_launches(whole, mapped);
  }
}

// A mapped page on several threads is one window: it still reports its progress (and gives its
// pages back) as its parts are merged, every 8 MiB, not only at its end.
TEST(NcuRawStream, MappedOnSeveralThreadsReportsProgressAsItsPartsMerge) {
  const std::string bytes = repeated_qwen(17);  // ~27 MB
  ASSERT_GT(bytes.size(), std::size_t{24} << 20);
  test::TempDir dir;
  dir.write("in.csv", bytes);
  ingest::ReadOptions options;
  options.threads = 3;
  model::Profile p;
  p.inputs.push_back(model::InputInfo{"in.csv", model::InputFormat::kNcuRawCsv, "", {}, {}});
  std::vector<std::uint64_t> reported;
  ingest::ReadContext ctx{"in.csv", p, 0, [&](std::uint64_t at) { reported.push_back(at); }, &options};
  Status s = ingest::read_ncu_raw_csv_file(dir.file("in.csv"), bytes.size(), ctx);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  ASSERT_GE(reported.size(), 3u);
  EXPECT_TRUE(std::is_sorted(reported.begin(), reported.end()));
  EXPECT_LT(reported.front(), bytes.size() / 2);  // not all at the end
  EXPECT_EQ(reported.back(), bytes.size());
  model::Profile whole;
  ASSERT_TRUE(ingest::read_input_bytes(bytes, "in.csv", whole).ok());
  expect_same_launches(whole, p);
}

TEST(NcuRawStream, HeaderBeyondTheFirstChunkFallsBackToReadingWhole) {
  std::string bytes = fixture_bytes("ncu/demo_live_raw_stdout.csv");  // console lines, then the CSV
  model::Profile whole, streamed;
  ASSERT_TRUE(ingest::read_input_bytes(bytes, "in.csv", whole).ok());
  Status s = read_streamed(bytes, streamed, 64, 1 << 16);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  expect_same_launches(whole, streamed);
}

TEST(NcuRawStream, ReadInputStreamsLargeFiles) {
  // Over read_input's streaming threshold (32 MB): the result must equal reading it whole.
  std::string bytes = repeated_qwen(22);
  ASSERT_GT(bytes.size(), 32u << 20);
  test::TempDir dir;
  dir.write("big.csv", bytes);
  ingest::ReadOptions fields_only;
  fields_only.all_metrics = false;
  model::Profile streamed, whole;
  ASSERT_TRUE(ingest::read_input(dir.file("big.csv"), streamed, fields_only).ok());
  ASSERT_TRUE(ingest::read_input_bytes(bytes, dir.file("big.csv"), whole, fields_only).ok());
  EXPECT_EQ(streamed.inputs[0].format, model::InputFormat::kNcuRawCsv);
  EXPECT_EQ(streamed.launches.size(), 396u * 22);
  expect_same_launches(whole, streamed);
}

// ---- details page ------------------------------------------------------------------------

TEST(NcuDetails, MetricRowsRuleRowsAndLaunchFields) {
  auto r = read_fixture("ncu/qwen_decode_details_first3.csv");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const auto& p = r.profile;
  EXPECT_EQ(p.inputs[0].format, model::InputFormat::kNcuDetailsCsv);
  ASSERT_EQ(p.launches.size(), 3u);
  const model::Launch& l = p.launches[0];
  EXPECT_EQ(l.id, 0);
  EXPECT_EQ(*l.duration_ns, 5060);  // "5.06" us
  EXPECT_EQ(p.config_of(l).registers_per_thread, 32);
  EXPECT_EQ(p.config_of(l).grid, (model::Dim3{8, 1, 1}));
  EXPECT_EQ(model::push_pop_path(p.stages[l.stage]), "decode");
  EXPECT_EQ(metric(p, l, "GPU Speed Of Light Throughput / DRAM Frequency"), 2.6e9);
  EXPECT_EQ(p.metrics[*p.metrics.find("GPU Speed Of Light Throughput / DRAM Frequency")].unit, "hz");
  EXPECT_EQ(p.devices.at(0).sm_count, 132);
  const auto rules = p.rules_of(l);
  ASSERT_EQ(rules.size(), 4u);
  EXPECT_EQ(rules[0].rule, "SOLBottleneck");
  EXPECT_EQ(rules[0].type, "OPT");
  EXPECT_FALSE(rules[0].est_speedup_pct.has_value());
  EXPECT_EQ(rules[1].rule, "LaunchConfiguration");
  EXPECT_EQ(rules[1].speedup_type, "global");
  EXPECT_EQ(rules[1].est_speedup_pct, 93.94);
  EXPECT_NE(rules[1].text.find("only 8 blocks"), std::string::npos);
}

TEST(NcuDetails, IdOutOfRangeIsAnError) {
  auto r = read_fixture("regressions/parse_ncu_integer_overflow_details.csv");  // found by fuzz_ncu_details
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.error().line, 2);
  EXPECT_NE(r.status.error().message.find("column 'ID': expected an integer, got '1e30'"), std::string::npos)
      << r.status.error().to_string();
}

TEST(NcuDetails, FullPageFromGzip) {
  auto r = read_fixture("ncu/qwen_decode_details.csv.gz");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  EXPECT_EQ(r.profile.launches.size(), 396u);
  std::size_t rules = 0;
  for (const auto& l : r.profile.launches) rules += r.profile.rules_of(l).size();
  EXPECT_EQ(rules, 1925u);
}

TEST(NcuDetails, BodyItemsOfPrintDetailsAll) {
  auto r = read_fixture("ncu/demo_details_all.csv.gz");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  ASSERT_EQ(r.profile.launches.size(), 18u);
  const auto& l = r.profile.launches[0];
  EXPECT_EQ(*l.duration_ns, 12130);
  EXPECT_EQ(metric(r.profile, l, "GPU Speed Of Light Throughput / GPU Throughput / Compute (SM) [%]"), 41.91);
  EXPECT_EQ(metric(r.profile, l, "Occupancy / Impact of Varying Register Count Per Thread / Registers Per Thread"), 16);
}

TEST(NcuDetails, TruncatedAndBadInputs) {
  std::string ok = fixture_bytes("ncu/qwen_decode_details_first3.csv");
  auto cut = read_bytes(ok.substr(0, ok.size() - 30));
  ASSERT_TRUE(cut.status.ok()) << cut.status.error().to_string();
  EXPECT_EQ(cut.profile.launches.size(), 3u);
  ASSERT_EQ(cut.profile.inputs[0].warnings.size(), 1u);
  EXPECT_EQ(cut.profile.inputs[0].warnings[0].line, 164);

  const BadInput cases[] = {
      {"duration not a number", replace_once(ok, "\"Duration\",\"us\",\"5.06\"", "\"Duration\",\"us\",\"fast\""),
       7, "metric 'Duration': expected a number, got 'fast'"},
      {"speedup not a number", replace_once(ok, "\"global\",\"93.94\"", "\"global\",\"lots\""), 0,
       "column 'Estimated Speedup'"},
      {"missing metric value", replace_once(ok, "\"Metric Value\"", "\"Value\""), 1, "missing column 'Metric Value'"},
      {"bad id", replace_once(ok, "\n\"1\",", "\n\"one\","), 0, "column 'ID'"},
  };
  for (const auto& c : cases) {
    auto r = read_bytes(c.bytes, "in.csv");
    ASSERT_FALSE(r.status.ok()) << c.what;
    if (c.line) {
      EXPECT_EQ(r.status.error().line, c.line) << c.what << ": " << r.status.error().to_string();
    }
    EXPECT_GT(r.status.error().line, 0) << c.what;
    EXPECT_NE(r.status.error().message.find(c.message), std::string::npos) << r.status.error().to_string();
  }
}

// ---- summary page ------------------------------------------------------------------------

TEST(NcuSummary, GroupsStandForTheirInvocations) {
  auto r = read_fixture("ncu/qwen_decode_summary.csv");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const auto& p = r.profile;
  EXPECT_EQ(p.inputs[0].format, model::InputFormat::kNcuSummaryCsv);
  ASSERT_EQ(p.launches.size(), 37u);  // kernel x launch configuration
  std::uint64_t launches = 0;
  for (const auto& l : p.launches) launches += l.count;
  EXPECT_EQ(launches, 396u);
  const model::Launch& sdpa = p.launches[0];
  EXPECT_EQ(name_of(p, sdpa).substr(0, 24), "cudnn_generated_fort_nat");
  EXPECT_EQ(sdpa.count, 9u);
  EXPECT_EQ(*sdpa.duration_ns, 7190);
  EXPECT_EQ(*sdpa.total_duration_ns(), 64710);
  EXPECT_EQ(p.config_of(sdpa).grid, (model::Dim3{1, 4, 4}));
}

TEST(NcuSummary, PerGpuColumnOrderReadsTheSame) {
  auto kernel = read_fixture("ncu/demo_summary.csv");
  auto gpu = read_fixture("ncu/demo_summary_gpu.csv");
  ASSERT_TRUE(kernel.status.ok() && gpu.status.ok());
  EXPECT_EQ(total_duration(kernel.profile), total_duration(gpu.profile));
  EXPECT_EQ(kernel.profile.launches.size(), 5u);
  EXPECT_EQ(gpu.profile.launches.size(), 5u);
}

TEST(NcuSummary, BadInvocations) {
  std::string bytes = replace_once(fixture_bytes("ncu/demo_summary.csv"), "\"0\",\"9.0\",\"2\",", "\"0\",\"9.0\",\"two\",");
  auto r = read_bytes(bytes, "in.csv");
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.error().line, 2);
  EXPECT_NE(r.status.error().message.find("'Invocations'"), std::string::npos);
  // A summary row stands for at most 2^32 - 1 invocations (a launch's 32-bit count).
  r = read_bytes(replace_once(fixture_bytes("ncu/demo_summary.csv"), "\"0\",\"9.0\",\"2\",", "\"0\",\"9.0\",\"4294967296\","),
                 "in.csv");
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.error().line, 2);
  EXPECT_NE(r.status.error().message.find("'Invocations': expected a positive integer below 2^32, got '4294967296'"),
            std::string::npos)
      << r.status.error().to_string();
}

// ---- several pages of one report ---------------------------------------------------------

TEST(NcuPages, RawAndDetailsOfOneReportMerge) {
  for (bool details_first : {false, true}) {
    model::Profile p;
    auto raw = test::fixture("ncu/demo_raw_base.csv");
    auto details = test::fixture("ncu/demo_details.csv");
    ASSERT_TRUE(ingest::read_input(details_first ? details : raw, p).ok());
    ASSERT_TRUE(ingest::read_input(details_first ? raw : details, p).ok());
    ingest::reconcile_inputs(p);
    ASSERT_EQ(p.launches.size(), 18u);
    const model::Launch* first = nullptr;
    for (const auto& l : p.launches) {
      if (l.id == 0) first = &l;
    }
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(*first->duration_ns, 12128);  // the raw page's exact value, not "12.13 us"
    EXPECT_FALSE(p.rules_of(*first).empty());  // the details page's rules came along
    EXPECT_TRUE(metric(p, *first, "GPU Speed Of Light Throughput / Duration"));
    EXPECT_TRUE(metric(p, *first, "gpu__time_duration.sum"));
    EXPECT_EQ(total_duration(p), 277760);
  }
}

TEST(NcuPages, SummaryOfTheSameProcessIsNotCountedTwice) {
  model::Profile p;
  ASSERT_TRUE(ingest::read_input(test::fixture("ncu/demo_raw_base.csv"), p).ok());
  ASSERT_TRUE(ingest::read_input(test::fixture("ncu/demo_summary.csv"), p).ok());
  ingest::reconcile_inputs(p);
  EXPECT_EQ(p.launches.size(), 18u);
  EXPECT_EQ(total_duration(p), 277760);
  ASSERT_EQ(p.inputs[1].warnings.size(), 1u);
  EXPECT_NE(p.inputs[1].warnings[0].message.find("5 kernel groups summarise launches already read from"),
            std::string::npos);
}

TEST(NcuPages, TwoReportsOfOneFormatBothCount) {
  model::Profile p;
  ASSERT_TRUE(ingest::read_input(test::fixture("ncu/demo_raw_base.csv"), p).ok());
  ASSERT_TRUE(ingest::read_input(test::fixture("ncu/demo_raw_dynamic.csv"), p).ok());
  ingest::reconcile_inputs(p);
  EXPECT_EQ(p.launches.size(), 36u);
}

}  // namespace
}  // namespace kernlens
