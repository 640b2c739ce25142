// The kernlens binary as a user runs it: exit codes, messages, and output files.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "cli_util.h"
#include "kernlens/load/run_record.h"
#include "kernlens/rundir/run_key.h"
#include "kernlens/store/database.h"
#include "synthetic_runs.h"
#include "test_util.h"

namespace kernlens {
namespace {

TEST(Cli, HelpAndVersion) {
  auto help = run_cli({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("analyze"), std::string::npos);
  auto analyze_help = run_cli({"analyze", "--help"});
  EXPECT_EQ(analyze_help.exit_code, 0);
  EXPECT_NE(analyze_help.out.find("--format"), std::string::npos);
  EXPECT_NE(analyze_help.out.find("--print-summary per-kernel"), std::string::npos);
  auto version = run_cli({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("kernlens " KERNLENS_VERSION), std::string::npos);
}

TEST(Cli, BadUsageExitsTwo) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {}, {"frobnicate"}, {"analyze"}, {"analyze", "x.csv", "--format", "xml"},
           {"analyze", "x.csv", "--top", "-3"}, {"analyze", "x.csv", "--no-such-flag"}}) {
    auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(args);
    EXPECT_EQ(r.err.rfind("kernlens: error: ", 0), 0u) << r.err;
  }
}

TEST(Cli, AnalyzeWritesTextAndJson) {
  test::TempDir dir;
  auto text = run_cli({"analyze", test::fixture("ncu/qwen_decode_raw.csv")});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("396 launches of 30 kernels"), std::string::npos);
  EXPECT_TRUE(text.err.empty()) << text.err;
  auto json = run_cli({"analyze", test::fixture("ncu/qwen_decode_raw.csv"), "--format", "json", "-o",
                       dir.file("a.json")});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(json.out.empty());
  EXPECT_NE(slurp(dir.file("a.json")).find("\"kernel_time_ns\": 1623264"), std::string::npos);
}

TEST(Cli, TruncatedLastLineWarnsAndStillAnalyzes) {
  test::TempDir dir;
  std::string bytes = test::fixture_bytes("ncu/qwen_decode_raw.csv");
  dir.write("cut.csv", bytes.substr(0, bytes.size() - 1000));  // inside the last row, line 398
  auto r = run_cli({"analyze", dir.file("cut.csv"), "--format", "json"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("kernlens: warning: " + dir.file("cut.csv") + ":398: the last row is cut short"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("\"launches\": 395"), std::string::npos);
  EXPECT_NE(r.out.find("\"warnings\""), std::string::npos);
}

// Every bad input: exit 2, one "kernlens: error: FILE[:LINE]: ..." line, no output file, and
// an existing output file left as it was.
TEST(Cli, BadInputsExitTwoAndWriteNothing) {
  test::TempDir dir;
  std::string raw = test::fixture_bytes("ncu/qwen_decode_raw.csv");
  // The duration analyze reads: the fourth of .avg, .max, .min, .sum.
  std::string bad_number = raw;
  const std::string durations = "\"5,056\",\"5,056\",\"5,056\",\"5,056\"";
  bad_number.replace(bad_number.find(durations), durations.size(), "\"5,056\",\"5,056\",\"5,056\",\"fast\"");
  std::string no_name = raw;
  no_name.replace(no_name.find("\"Kernel Name\""), 13, "\"Name\"");
  std::string binary(4096, '\0');
  for (std::size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>(i * 7919 % 251);
  dir.write("empty.csv", "");
  dir.write("binary.bin", binary);
  dir.write("cut_header.csv", raw.substr(0, 3000));
  dir.write("bad_number.csv", bad_number);
  dir.write("no_name.csv", no_name);
  dir.write("garbage.txt", "hello\nworld\n");
  dir.write("good.csv", raw);
  const std::pair<std::string, std::string> cases[] = {
      {dir.file("missing.csv"), ": cannot open: No such file or directory"},
      {dir.file("empty.csv"), ": empty file"},
      {dir.file("binary.bin"), ": unrecognised format: a binary file"},
      {dir.file("cut_header.csv"), ":1: the file ends in the header row"},
      {dir.file("bad_number.csv"), ":3: column 'gpu__time_duration.sum': expected a number, got 'fast'"},
      {dir.file("no_name.csv"), ":1: missing column 'Kernel Name'"},
      {dir.file("garbage.txt"), ": unrecognised format: no CSV header"},
      {dir.path().string(), ": is a directory"},
  };
  for (const auto& [input, message] : cases) {
    for (const char* format : {"text", "json"}) {
      std::string out = dir.file("out.json");
      auto r = run_cli({"analyze", dir.file("good.csv"), input, "--format", format, "-o", out});
      EXPECT_EQ(r.exit_code, 2) << input;
      EXPECT_EQ(r.err.rfind("kernlens: error: " + input + message, 0), 0u) << "stderr: " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_FALSE(std::filesystem::exists(out)) << input;
    }
  }
  dir.write("keep.json", "previous");
  auto r = run_cli({"analyze", dir.file("bad_number.csv"), "-o", dir.file("keep.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(slurp(dir.file("keep.json")), "previous");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 8);  // no temporaries
}

TEST(Cli, NamesReadsAFileOrStandardInput) {
  test::TempDir dir;
  dir.write("names.txt", "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT\r\n\n  \n_Z5scaleifPf\nmystery");
  const std::string nvjet = "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT";
  const std::string expected =
      nvjet + "\t" + nvjet + "\tcublas\tgemm\tcublas-nvjet\n"
      "_Z5scaleifPf\tscale\tuser\telementwise\tname-elementwise\n"
      "mystery\tmystery\tuser\tother\t(none)\n";
  auto file = run_cli({"names", dir.file("names.txt")});
  EXPECT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(file.out, expected);
  auto piped = run_cli({"names", "-"}, dir.file("names.txt"));
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out, expected);
  auto empty = run_cli({"names", "-"});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err, "kernlens: error: <stdin>: empty input\n");
  auto help = run_cli({"names", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("name  base_name  library  op_class  rule"), std::string::npos) << help.out;
}

TEST(Cli, RulesFilesComeBeforeTheBuiltInRules) {
  // --rules takes one file each time, so an input may follow it.
  auto r = run_cli({"analyze", "--rules", test::fixture("rules/demo_rules.txt"), "--rules",
                    test::fixture("rules/demo_rules.txt"), test::fixture("ncu/demo_raw_base.csv"),
                    "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"rule\": \"demo-fill\""), std::string::npos);
  for (const char* command : {"analyze", "names"}) {
    test::TempDir dir;
    std::string out = dir.file("out.txt");
    auto bad = run_cli({command, test::fixture("ncu/demo_raw_base.csv"), "--rules",
                        test::fixture("rules/bad_op_class.txt"), "-o", out});
    if (std::string(command) == "names") {  // names has no -o: it fails as bad usage
      EXPECT_EQ(bad.exit_code, 2);
      continue;
    }
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_EQ(bad.err.rfind("kernlens: error: " + test::fixture("rules/bad_op_class.txt") +
                                ":3: unknown op_class 'convolution'",
                            0),
              0u)
        << bad.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

// PyTorch traces damaged as files get damaged: exit 2 and a message that says what and where.
TEST(Cli, BadPytorchTracesExitTwo) {
  test::TempDir dir;
  const std::string gz = slurp(test::fixture("pytorch/llama_torch_trace.json.gz"));
  const std::string small_gz = slurp(test::fixture("pytorch/nested_stages_trace.json.gz"));
  std::string json = test::fixture_bytes("pytorch/gemm_zoo_trace.json.gz");
  dir.write("cut.json.gz", gz.substr(0, gz.size() / 2));  // 7 MB in: found while streaming
  dir.write("cut_small.json.gz", small_gz.substr(0, small_gz.size() / 2));
  dir.write("cut.json", json.substr(0, json.size() / 2));
  for (std::size_t at = 0; (at = json.find("\"cat\": \"kernel\"", at)) != std::string::npos;) {
    json.replace(at, 15, "\"cat\": \"other\"");
  }
  dir.write("no_kernels.json", json);
  const std::pair<std::string, std::string> cases[] = {
      {"cut.json.gz", ":[0-9]+: gzip data ends early: the file is truncated \\(compressed byte [0-9]+\\)"},
      {"cut_small.json.gz", ":[0-9]+: gzip data ends early: the file is truncated \\(compressed byte [0-9]+\\)"},
      {"cut.json", ":[0-9]+: the file ends inside an event: the trace is truncated \\(byte [0-9]+\\)"},
      {"no_kernels.json", ": no kernel events \\(\"cat\": \"kernel\"\\) in the trace.*"},
  };
  for (const auto& [file, message] : cases) {
    auto r = run_cli({"analyze", dir.file(file), "-o", dir.file("out.txt")});
    EXPECT_EQ(r.exit_code, 2) << file;
    EXPECT_TRUE(std::regex_match(r.err, std::regex("kernlens: error: " + dir.file(file) + message + "\n")))
        << "stderr: " << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("out.txt")));
  }
}

// `report` on every input format kernlens reads: a whole page each time.
TEST(Cli, ReportFromEveryFixtureFormat) {
  test::TempDir dir;
  const std::vector<std::string> inputs = {
      "ncu/qwen_decode_raw.csv", "ncu/qwen_decode_details.csv.gz", "ncu/qwen_decode_summary.csv",
      "nsys/llama_stages.sqlite", "nsys/saxpy_stats_cuda_gpu_kern_sum.csv", "pytorch/llama_stages_trace.json.gz",
      "profile_run/llama_prefill"};
  for (const auto& input : inputs) {
    std::string html = dir.file("r.html"), md = dir.file("r.md");
    auto r = run_cli({"report", test::fixture(input), "-o", html});
    EXPECT_EQ(r.exit_code, 0) << input << ": " << r.err;
    std::string page = slurp(html);
    EXPECT_NE(page.find("<table id=\"kernels\""), std::string::npos) << input;
    EXPECT_NE(page.find("<svg id=\"op-class-chart\""), std::string::npos) << input;
    EXPECT_EQ(page.substr(page.size() - 8), "</html>\n") << input;
    auto m = run_cli({"report", test::fixture(input), "--format", "md", "-o", md});
    EXPECT_EQ(m.exit_code, 0) << input << ": " << m.err;
    EXPECT_NE(slurp(md).find("## Top kernels"), std::string::npos) << input;
  }
  // Timelines draw the GPU busy strip; ncu inputs say why they cannot.
  run_cli({"report", test::fixture("nsys/llama_stages.sqlite"), "-o", dir.file("t.html")});
  EXPECT_NE(slurp(dir.file("t.html")).find("<svg id=\"timeline\""), std::string::npos);
}

TEST(Cli, ReportOfBadInputWritesNoFile) {
  test::TempDir dir;
  auto r = run_cli({"report", test::fixture("nsys/not_an_nsys_export.sqlite"), "-o", dir.file("r.html")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("kernlens: error: ", 0), 0u) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.html")));
}

TEST(Cli, ExportWritesATraceAndNothingOnBadInput) {
  test::TempDir dir;
  auto bad = run_cli({"export", test::fixture("nsys/not_an_nsys_export.sqlite"), "-o", dir.file("t.json")});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err.rfind("kernlens: error: ", 0), 0u) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("t.json")));
  auto good = run_cli({"export", test::fixture("nsys/llama_stages.sqlite"), "--format", "perfetto", "-o", dir.file("t.json")});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_EQ(slurp(dir.file("t.json")).rfind("{\"traceEvents\": [", 0), 0u);
  EXPECT_EQ(run_cli({"export", test::fixture("nsys/llama_stages.sqlite"), "--format", "svg"}).exit_code, 2);
}

TEST(Cli, AnalyzeCsvWritesOneTableOrSections) {
  auto one = run_cli({"analyze", test::fixture("ncu/qwen_decode_raw.csv"), "--format", "csv", "--table", "stages"});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out.rfind("name,depth,launches,kernel_time_ns,", 0), 0u) << one.out;
  auto all = run_cli({"analyze", test::fixture("ncu/qwen_decode_raw.csv"), "--format", "csv", "--top", "2"});
  EXPECT_EQ(all.out.rfind("# kernels\r\nrank,name,base_name,", 0), 0u) << all.out.substr(0, 200);
  EXPECT_NE(all.out.find("\r\n\r\n# families\r\n"), std::string::npos);
  EXPECT_NE(all.out.find("\r\n\r\n# stages\r\n"), std::string::npos);
}

// The five lines a person reads first, then the report with a timeline and stages.
TEST(Cli, DemoPrintsWhatMattersMostAndWritesTheReport) {
  test::TempDir dir;
  auto r = run_cli({"demo", "-o", dir.file("demo.html")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (std::string line : {"\n  time:  ", "\n  worst stage:  ", "\n  top kernel:  ", "\n  MFU:  ",
                           "\n  report:  "}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " in " << r.out;
  }
  EXPECT_NE(r.out.find("report:       " + dir.file("demo.html")), std::string::npos) << r.out;
  // The warm-up's idle start-up is not the worst stage; decode (launch-bound) is.
  EXPECT_NE(r.out.find("worst stage:  decode: the GPU was idle"), std::string::npos) << r.out;
  // Measured MFU with its interval, and beside it the MFU on the config's analytic FLOPs.
  EXPECT_NE(r.out.find("MFU:          prefill 5.0% (5.0–7.5%) (scaled), 5.5% on analytic FLOPs"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("warmup"), std::string::npos) << r.out;
  std::string page = slurp(dir.file("demo.html"));
  EXPECT_NE(page.find("<svg id=\"timeline\""), std::string::npos);
  EXPECT_NE(page.find("<section id=\"headline\">"), std::string::npos);
}

std::string example_run_dir(const std::string& name) {
  return test::fixture("../../examples/data/runs/" + name);
}

// db ingest computes the run key first: an input whose key the database holds is not read at
// all (here a file no reader could parse, whose key is there: it is skipped without an
// error), and an input whose bytes changed is read again under its new key.
TEST(CliDb, IngestSkipsAKnownKeyUnreadAndRereadsAChangedInput) {
  test::TempDir dir;
  const std::string db_path = dir.file("runs.db");
  dir.write("unreadable.csv", "not an export of any profiler\n");
  auto key = rundir::run_key(dir.file("unreadable.csv"));
  ASSERT_TRUE(key.ok());
  {
    auto db = store::open_for_writing(db_path);
    ASSERT_TRUE(db.ok()) << db.error().to_string();
    model::RunRecord known = test::synthetic_run(11, 3);
    known.meta.run_key = *key;
    ASSERT_TRUE(store::ingest_run(*db, known).ok());
  }
  auto skipped = run_cli({"db", "ingest", "--db", db_path, dir.file("unreadable.csv")});
  ASSERT_EQ(skipped.exit_code, 0) << skipped.err;  // parsing it would have failed
  EXPECT_NE(skipped.out.find("already in the database " + dir.file("unreadable.csv") + ": " + *key + " (not read again)"),
            std::string::npos)
      << skipped.out;

  dir.write("unreadable.csv", "not an export of any profiler, changed\n");
  auto reread = run_cli({"db", "ingest", "--db", db_path, dir.file("unreadable.csv")});
  EXPECT_EQ(reread.exit_code, 2);
  EXPECT_NE(reread.err.find("unrecognised format"), std::string::npos) << reread.err;

  const std::string raw = dir.file("raw.csv");
  std::filesystem::copy_file(test::fixture("ncu/qwen_decode_raw.csv"), raw);
  auto first = run_cli({"db", "ingest", "--db", db_path, raw});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out.rfind("added " + raw + ": file-", 0), 0u) << first.out;
  auto again = run_cli({"db", "ingest", "--db", db_path, raw});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("(not read again)"), std::string::npos) << again.out;
  std::ofstream(raw, std::ios::app) << "\n";  // the same launches, other bytes: another run key
  auto changed = run_cli({"db", "ingest", "--db", db_path, raw});
  ASSERT_EQ(changed.exit_code, 0) << changed.err;
  EXPECT_EQ(changed.out.rfind("added " + raw + ": file-", 0), 0u) << changed.out;
  EXPECT_NE(changed.out, first.out);  // another key
  // The same kernels and stages, read again.
  EXPECT_EQ(changed.out.substr(changed.out.find(" (")), first.out.substr(first.out.find(" ("))) << changed.out;
  auto runs = run_cli({"db", "query", "--db", db_path, "SELECT COUNT(*) AS n FROM runs", "--format", "csv"});
  EXPECT_EQ(runs.out, "n\r\n3\r\n") << runs.err;
}

// A database written before run keys were XXH3 holds keys of the first form (FNV-1a): an
// unchanged run is found under its old key, unread, and printed with it; a changed input goes
// in under a key of the current form. A new database holds current keys only (so ingest
// computes no old key there) until a key of another form goes in.
TEST(CliDb, IngestFindsAnUnchangedRunUnderItsKeyFromBeforeXxh3) {
  test::TempDir dir;
  const std::string old_db = dir.file("old.db");
  const std::string run = example_run_dir("llama_prefill");
  auto keys = rundir::run_keys(run, true);
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->legacy_key.find("xxh3"), std::string::npos);
  {
    auto db = store::open_for_writing(old_db);
    ASSERT_TRUE(db.ok()) << db.error().to_string();
    // What kernlens before XXH3 wrote: the run under its first-form key.
    auto record = load::load_run_record(run, {}, test::builtin_classifier(), keys->legacy_key);
    ASSERT_TRUE(record.ok()) << record.error().to_string();
    ASSERT_TRUE(store::ingest_run(*db, *record).ok());
  }
  auto again = run_cli({"db", "ingest", "--db", old_db, run});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "already in the database " + run + ": " + keys->legacy_key + " (not read again)\n");
  EXPECT_EQ(again.err, "");
  const std::string raw = dir.file("raw.csv");
  std::filesystem::copy_file(test::fixture("ncu/qwen_decode_raw.csv"), raw);
  auto added = run_cli({"db", "ingest", "--db", old_db, raw});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_EQ(added.out.rfind("added " + raw + ": file-xxh3.", 0), 0u) << added.out;
  auto count = [&](const std::string& db) {
    return run_cli({"db", "query", "--db", db, "SELECT COUNT(*) AS n FROM runs", "--format", "csv"}).out;
  };
  EXPECT_EQ(count(old_db), "n\r\n2\r\n");

  const std::string new_db = dir.file("new.db");
  auto first = run_cli({"db", "ingest", "--db", new_db, run});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out.rfind("added " + run + ": " + keys->key + " (", 0), 0u) << first.out;
  auto known = run_cli({"db", "ingest", "--db", new_db, run});
  EXPECT_EQ(known.out, "already in the database " + run + ": " + keys->key + " (not read again)\n");
  {
    auto db = store::open_for_writing(new_db);
    ASSERT_TRUE(db.ok());
    EXPECT_FALSE(*store::has_run_key_not_matching(*db, rundir::current_key_glob()));
    model::RunRecord other = test::synthetic_run(5, 2);
    other.meta.run_key = "file-0123456789abcdef";
    ASSERT_TRUE(store::ingest_run(*db, other).ok());
    EXPECT_TRUE(*store::has_run_key_not_matching(*db, rundir::current_key_glob()));
  }
}

TEST(CliDb, IngestQueryAndExport) {
  test::TempDir dir;
  std::string db = dir.file("runs.db");
  auto ingest = run_cli({"db", "ingest", "--db", db, example_run_dir("llama_prefill"), example_run_dir("qwen_prefill"),
                         "--tag", "owner=ci"});
  ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
  EXPECT_NE(ingest.out.find("added"), std::string::npos);
  auto again = run_cli({"db", "ingest", "--db", db, example_run_dir("llama_prefill")});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.out.find("already in the database"), std::string::npos);

  auto popularity = run_cli({"db", "query", "--db", db, "--view", "popularity", "--format", "json"});
  ASSERT_EQ(popularity.exit_code, 0) << popularity.err;
  auto rows = nlohmann::json::parse(popularity.out);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0]["models"], 2);
  auto runs = run_cli({"db", "query", "--db", db, "SELECT model, batch FROM runs ORDER BY model", "--format", "csv"});
  EXPECT_EQ(runs.out, "model,batch\r\nllama,4\r\nqwen,4\r\n");

  auto write = run_cli({"db", "query", "--db", db, "DELETE FROM runs"});
  EXPECT_EQ(write.exit_code, 2);
  EXPECT_NE(write.err.find("kernlens: error: " + db + ": db query is read-only"), std::string::npos) << write.err;

  auto exported = run_cli({"db", "export", "--db", db, "--format", "csv", "--out", dir.file("csv")});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::string kernels = slurp(dir.file("csv/kernels.csv"));
  EXPECT_EQ(kernels.rfind("run_id,kernel_idx,name,base_name,", 0), 0u);
  auto jsonl = run_cli({"db", "export", "--db", db, "--format", "jsonl", "--out", dir.file("jsonl")});
  ASSERT_EQ(jsonl.exit_code, 0);
  std::istringstream lines(slurp(dir.file("jsonl/runs.jsonl")));
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) EXPECT_TRUE(nlohmann::json::parse(line).contains("run_key")) << ++count;
}

// A multi-rank job as one run (issue 17): its inputs joined by ',' are ingested once, the
// per-rank view has one row per rank, and compare of two such runs from the database keeps
// the ranks; a missing input among them is named.
TEST(CliDb, MultiRankRunIngestedQueriedAndComparedFromTheDatabase) {
  test::TempDir dir;
  const std::string db = dir.file("runs.db");
  const std::string hta = test::fixture("multirank/hta_sendrecv_rank-0.json.gz") + "," +
                          test::fixture("multirank/hta_sendrecv_rank-1.json.gz");
  const std::string gloo = test::fixture("multirank/tp_gloo_rank-0.json.gz") + "," +
                           test::fixture("multirank/tp_gloo_rank-1.json.gz");
  auto ingest = run_cli({"db", "ingest", "--db", db, hta, gloo});
  ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
  EXPECT_NE(ingest.out.find(", 2 ranks)"), std::string::npos) << ingest.out;
  auto again = run_cli({"db", "ingest", "--db", db, hta});
  EXPECT_NE(again.out.find("already in the database"), std::string::npos) << again.out;
  auto ranks = run_cli({"db", "query", "--db", db, "--view", "ranks", "--format", "json"});
  ASSERT_EQ(ranks.exit_code, 0) << ranks.err;
  auto rows = nlohmann::json::parse(ranks.out);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["rank"], 0);
  EXPECT_EQ(rows[1]["rank"], 1);
  auto keys = run_cli({"db", "query", "--db", db, "SELECT run_key FROM runs ORDER BY run_id", "--format", "csv"});
  std::istringstream lines(keys.out);
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  if (!first.empty() && first.back() == '\r') first.pop_back();
  if (!second.empty() && second.back() == '\r') second.pop_back();
  EXPECT_EQ(first.rfind("ranks-", 0), 0u) << first;
  auto compare = run_cli({"compare", "--db", db, first, first, "--format", "json"});
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  auto j = nlohmann::json::parse(compare.out);
  ASSERT_TRUE(j.contains("ranks"));
  EXPECT_EQ(j["ranks"]["ranks"].size(), 2u);
  EXPECT_EQ(j["ranks"]["ranks"][1]["kernel_time"]["delta_ns"], 0);
  EXPECT_EQ(j["ranks"]["ranks"][1]["kernel_time"]["base_ns"], rows[1]["kernel_time_ns"]);

  auto missing = run_cli({"compare", hta, hta + ",no-such-rank.json.gz"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("kernlens: error: no-such-rank.json.gz: no such file (one of the ranks' inputs joined by ',')"),
            std::string::npos) << missing.err;
}

TEST(RunInputs, CommaJoinedInputsAreOneRunUnlessThePathExists) {
  EXPECT_EQ(rundir::run_inputs("a.json.gz,b.json.gz"), (std::vector<std::string>{"a.json.gz", "b.json.gz"}));
  EXPECT_EQ(rundir::run_inputs("runs/llama"), (std::vector<std::string>{"runs/llama"}));
  test::TempDir dir;
  dir.write("odd,name.csv", "x");
  EXPECT_EQ(rundir::run_inputs(dir.file("odd,name.csv")), (std::vector<std::string>{dir.file("odd,name.csv")}));
  auto one = rundir::run_key(std::vector<std::string>{dir.file("odd,name.csv")});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->rfind("file-", 0), 0u);
}

TEST(CliDb, ClearErrorsForFilesThatAreNotItsDatabase) {
  test::TempDir dir;
  dir.write("notes.db", "not a database");
  auto r = run_cli({"db", "ingest", "--db", dir.file("notes.db"), example_run_dir("llama_prefill")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "kernlens: error: " + dir.file("notes.db") + ": not a kernlens database: not an SQLite file\n");
  auto missing = run_cli({"db", "query", "--db", dir.file("none.db"), "SELECT 1"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.file("none.db")));
  auto bad_tag = run_cli({"db", "ingest", "--db", dir.file("new.db"), "--tag", "batch=four", example_run_dir("llama_prefill")});
  EXPECT_EQ(bad_tag.exit_code, 2);
  EXPECT_NE(bad_tag.err.find("batch must be an integer"), std::string::npos);
}

// compare gates CI: exit 1 when the candidate is slower beyond the threshold. llama's
// prefill takes more kernel time than qwen's, so qwen -> llama is a regression.
// `--vs` with no run after it took the next option for a run ("--threshold: no such file").
TEST(CliCompare, VsWithoutRunsSaysSo) {
  auto r = run_cli({"compare", example_run_dir("llama_prefill"), "--vs", "--threshold", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--vs needs the candidate runs right after it; '--threshold' is an option"), std::string::npos)
      << r.err;
}

TEST(CliCompare, ExitCodeGatesOnRegression) {
  test::TempDir dir;
  auto faster = run_cli({"compare", example_run_dir("llama_prefill"), example_run_dir("qwen_prefill")});
  EXPECT_EQ(faster.exit_code, 0) << faster.err;
  EXPECT_NE(faster.out.find("verdict: improvement"), std::string::npos);
  auto slower = run_cli({"compare", example_run_dir("qwen_prefill"), example_run_dir("llama_prefill"), "--format", "md"});
  EXPECT_EQ(slower.exit_code, 1);
  EXPECT_EQ(slower.out.rfind("### kernlens compare: regression", 0), 0u);
  auto lenient = run_cli({"compare", example_run_dir("qwen_prefill"), example_run_dir("llama_prefill"), "--threshold",
                          "1000"});
  EXPECT_EQ(lenient.exit_code, 0);

  std::string db = dir.file("runs.db");
  ASSERT_EQ(run_cli({"db", "ingest", "--db", db, example_run_dir("llama_prefill"), example_run_dir("qwen_prefill")}).exit_code, 0);
  auto from_db = run_cli({"compare", "--db", db, "qwen", "llama", "--format", "json"});
  EXPECT_EQ(from_db.exit_code, 1) << from_db.err;
  auto from_files = run_cli({"compare", example_run_dir("qwen_prefill"), example_run_dir("llama_prefill"), "--format", "json"});
  EXPECT_EQ(from_db.out, from_files.out);  // the database keeps everything compare uses

  auto unknown = run_cli({"compare", "--db", db, "mistral", "llama"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("no run 'mistral'"), std::string::npos);
}

// Issues 15 and 25: everything after `--` is the program's. CLI11 let an option of several
// values eat the `--`, so `--nvtx-include prefill -- python3 work.py --top 3` took --top 3 as
// profile's own (silently) and `... --model x` failed. Every option of `profile`, written right
// before `--`, leaves the program's arguments alone; the list must name every option --help shows.
TEST(CliProfile, EveryOptionWorksRightBeforeTheSeparator) {
  test::TempDir dir;
  const std::string ncu = test::fixture("fake_tools/bin/ncu");
  const std::vector<std::vector<std::string>> cases = {
      {"--discovery", "ncu"}, {"--discovery-from", dir.path().string()}, {"--top", "5"}, {"--coverage", "0.8"},
      {"--tier", "quick"}, {"--nvtx-include", "prefill"}, {"--nvtx-include", "LLM@prefill/"},
      {"--nvtx-range", "warmup"}, {"--clock-control", "base"}, {"--replay-mode", "application"},
      {"-o", dir.path().string()}, {"--output", dir.path().string()}, {"--out", dir.path().string()}, {"-f"},
      {"--force-overwrite"}, {"--run-id", "x"}, {"--tag", "batch=16"}, {"--timeout", "30"}, {"--ranks", "0,1"}, {"--ranks", "all"},
      {"--deep-timeout", "90"},
      {"--ncu", ncu}, {"--nsys", "/nonexistent/nsys"}, {"--tracer", "/nonexistent/tracer.so"}, {"--dry-run"},
      {"--no-kill"}, {"--no-early-start"}, {"--early-programs", "1"}, {"--quiet"}, {"--verbose"}, {"--repeat", "3"}, {"--discovery-only"}, {"--rules", test::fixture("rules/demo_rules.txt")},
      {"--threads", "2"}, {"--help"}, {"-h"}};
  // Every option the help lists has a case.
  auto help = run_cli({"profile", "--help"});
  std::set<std::string> tested;
  for (const auto& c : cases) tested.insert(c[0]);
  std::regex option_re("(^|[ ,])(--?[a-z][a-z-]*)");
  for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), option_re); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[2];
    if (help.out.find("  " + name) != std::string::npos || help.out.find("," + name) != std::string::npos) {
      EXPECT_TRUE(tested.contains(name)) << name << " has no case";
    }
  }
  for (const auto& c : cases) {
    if (c[0] == "--help" || c[0] == "-h") continue;
    std::vector<std::string> args = {"profile", "--dry-run"};
    if (c[0] != "--ncu") args.insert(args.end(), {"--ncu", ncu});
    args.insert(args.end(), c.begin(), c.end());
    for (const char* a : {"--", "python3", "work.py", "--top", "3", "--model", "x"}) args.emplace_back(a);
    auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << c[0] << ": " << r.err;
    EXPECT_NE(r.out.find(" python3 work.py --top 3 --model x\n"), std::string::npos) << c[0] << ": " << r.out;
  }
  // Without `--`, the first word of the program ends kernlens's options too, as with ncu and nsys.
  auto bare = run_cli({"profile", "--dry-run", "--ncu", ncu, "python3", "work.py", "--top", "3"});
  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_NE(bare.out.find(" python3 work.py --top 3\n"), std::string::npos) << bare.out;
}

// The same CLI11 behaviour in the other commands: an option of several values before `--`
// must not eat it, so that an input named like an option can follow.
TEST(CliProfile, OtherCommandsKeepTheSeparatorToo) {
  test::TempDir dir;
  dir.write("-odd.csv", test::fixture_bytes("ncu/qwen_decode_raw.csv"));
  for (const std::vector<std::string>& option : std::vector<std::vector<std::string>>{
           {"--tokens", "decode=64", "--params", "1e9"}, {"--model-flops", "1e12"}, {"--rules", test::fixture("rules/demo_rules.txt")}}) {
    std::vector<std::string> args = {"analyze"};
    args.insert(args.end(), option.begin(), option.end());
    args.insert(args.end(), {"--", "-odd.csv"});
    auto r = run_cli(args, "", dir.path().string());
    EXPECT_EQ(r.exit_code, 0) << option[0] << ": " << r.err;
    EXPECT_NE(r.out.find("396 launches of 30 kernels"), std::string::npos) << option[0] << ": " << r.out;
  }
  auto ingest = run_cli({"db", "ingest", "--db", dir.file("k.db"), "--tag", "a=b", "--", "-odd.csv"}, "",
                        dir.path().string());
  EXPECT_EQ(ingest.exit_code, 0) << ingest.err;
}

// `profile --tag` lands in manifest.json, and `db ingest` takes those tags along with its own
// --tag (which wins on the same key).
TEST(CliProfile, TagsOfAProfileReachTheDatabase) {
  test::TempDir dir;
  auto profile = run_cli({"profile", "--discovery", "ncu", "--ncu", test::fixture("fake_tools/bin/ncu"), "-o",
                          dir.file("runs"), "--run-id", "tagged", "--tag", "batch=16", "--tag", "prompt_tokens=512",
                          "--tag", "point=a", "--quiet", "--", "true"});
  ASSERT_EQ(profile.exit_code, 0) << profile.err;
  auto manifest = nlohmann::json::parse(slurp(dir.file("runs/tagged/manifest.json")));
  EXPECT_EQ(manifest["tags"], nlohmann::json({{"batch", "16"}, {"prompt_tokens", "512"}, {"point", "a"}}));
  const std::string db = dir.file("k.db");
  auto ingest = run_cli({"db", "ingest", "--db", db, "--tag", "point=b", dir.file("runs/tagged")});
  ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
  auto tags = run_cli({"db", "query", "--db", db, "--format", "csv",
                       "SELECT key, value FROM run_tags WHERE key IN ('batch', 'prompt_tokens', 'point') ORDER BY key"});
  EXPECT_EQ(tags.out, "key,value\r\nbatch,16\r\npoint,b\r\nprompt_tokens,512\r\n") << tags.err;
  auto batch = run_cli({"db", "query", "--db", db, "--format", "csv", "SELECT batch FROM runs"});
  EXPECT_EQ(batch.out, "batch\r\n16\r\n") << batch.err;
  auto bad = run_cli({"profile", "--dry-run", "--tag", "no-equals-sign", "--", "true"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--tag no-equals-sign: expected KEY=VALUE"), std::string::npos) << bad.err;
}

// `profile --tag` writes the workload into the manifest: analyze (and report) read the model's
// config and sizes from there, with the config beside the manifest; an option given wins.
TEST(CliAnalytic, TheWorkloadComesFromTheRunDirectorysTags) {
  test::TempDir dir;
  const std::filesystem::path run = dir.path() / "llama_prefill";
  std::filesystem::copy(example_run_dir("llama_prefill"), run, std::filesystem::copy_options::recursive);
  std::filesystem::copy_file(test::fixture("../../examples/workloads/configs/llm_stages_llama.json"),
                             run / "config.json");
  auto manifest = nlohmann::json::parse(slurp((run / "manifest.json").string()));
  manifest["tags"] = {{"model_config", "config.json"}, {"batch", "4"}, {"prompt_tokens", "256"}, {"runs", "2"}};
  std::ofstream((run / "manifest.json").string()) << manifest.dump(2);
  auto r = run_cli({"analyze", run.string(), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto prefill = nlohmann::json::parse(r.out)["stages"][0];
  EXPECT_EQ(prefill["analytic_flops"], 563748012032.0);
  EXPECT_NE(prefill["analytic_source"].get<std::string>().find("2 runs (given)"), std::string::npos);
  auto one_run = run_cli({"analyze", run.string(), "--runs", "1", "--format", "json"});
  EXPECT_EQ(nlohmann::json::parse(one_run.out)["stages"][0]["analytic_flops"], 563748012032.0 / 2);

  manifest["tags"] = {"batch=four"};  // a list of KEY=VALUE, as given on the command line
  std::ofstream((run / "manifest.json").string()) << manifest.dump(2);
  auto bad = run_cli({"analyze", run.string(), "--model-config", (run / "config.json").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("manifest.json: tag 'batch' must be a positive integer, not 'four'"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace kernlens
