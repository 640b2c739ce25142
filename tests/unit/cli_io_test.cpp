// Outputs and inputs as users' systems have them, through the commands: -o onto links,
// devices and FIFOs, an output that is an input, inputs never written, devices refused as
// inputs, hostile names (control characters, invalid UTF-8) in every output format, and the
// limits of db query.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>

#include "cli_util.h"
#include "test_util.h"

namespace kernlens {
namespace {

namespace fs = std::filesystem;

const std::string kInput = test::fixture("nsys/saxpy_stats_cuda_gpu_kern_sum.csv");

// An nsys stats kernel summary with the given kernel names, one row each.
std::string stats_csv(const std::vector<std::string>& names) {
  std::string csv = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n";
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::string quoted;
    for (char c : names[i]) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    csv += "10.0," + std::to_string(1000 * (i + 1)) + ",1,1000.0,1000.0,1000,1000,0.0,\"" + quoted + "\"\n";
  }
  return csv;
}

TEST(CliOutputs, AnalyzeWritesThroughASymlinkAndKeepsIt) {
  test::TempDir dir;
  dir.write("target.txt", "old");
  fs::create_symlink("target.txt", dir.file("link.txt"));
  auto r = run_cli({"analyze", kInput, "-o", dir.file("link.txt")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir.file("link.txt")));
  EXPECT_NE(slurp(dir.file("target.txt")).find("saxpy"), std::string::npos);
}

TEST(CliOutputs, VerboseSaysWhereTheTimeWentOnStderrAndLeavesTheOutputAlone) {
  const std::string input = test::fixture("nsys/llama_stages.sqlite");
  auto plain = run_cli({"analyze", input, "--format", "json"});
  auto verbose = run_cli({"analyze", input, "--format", "json", "--verbose"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(verbose.exit_code, 0) << verbose.err;
  EXPECT_EQ(verbose.out, plain.out);
  for (const std::string& step : std::vector<std::string>{"\n  read " + input + " ", "\n    kernel rows ", "\n    stages ", "\n  analysis ", "\n    ranks ", "\n  json output ", "\n  write "}) {
    EXPECT_NE(verbose.err.find(step), std::string::npos) << step << " in:\n" << verbose.err;
  }
  EXPECT_EQ(plain.err.find("where the time went"), std::string::npos);
  const std::string trace = test::fixture("pytorch/llama_stages_trace.json.gz");
  auto trace_steps = run_cli({"analyze", trace, "--format", "json", "-o", "/dev/null", "--verbose"});
  ASSERT_EQ(trace_steps.exit_code, 0) << trace_steps.err;
  EXPECT_NE(trace_steps.err.find("\n    launches linked to their CUDA calls "), std::string::npos) << trace_steps.err;
}

TEST(CliOutputs, AnalyzeIntoADeviceLeavesTheDevice) {
  test::TempDir dir;
  const std::string device = dir.file("mynull");
  if (mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "cannot create a device node here (" << std::strerror(errno) << ")";
  }
  for (const char* command : {"analyze", "report"}) {
    auto r = run_cli({command, kInput, "-o", device});
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
    struct stat st {};
    ASSERT_EQ(lstat(device.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << command << " replaced the device with a regular file";
  }
}

TEST(CliOutputs, AnalyzeIntoAFifo) {
  test::TempDir dir;
  const std::string fifo = dir.file("out.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto reader = std::async(std::launch::async, [&] { return slurp(fifo); });
  auto r = run_cli({"analyze", kInput, "--format", "json", "-o", fifo});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::accept(reader.get()));
  struct stat st {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

// /dev/stdout names whatever the shell opened: a file opened to append is appended to, not
// replaced; a pipe is written.
TEST(CliOutputs, DevStdoutIsWrittenInPlace) {
  test::TempDir dir;
  const std::string log = dir.file("log.txt");
  dir.write("log.txt", "earlier lines\n");
  const std::string command = std::string(KERNLENS_BIN) + " analyze " + kInput + " -o /dev/stdout >> " + log;
  ASSERT_EQ(std::system(command.c_str()), 0);
  const std::string text = slurp(log);
  EXPECT_EQ(text.rfind("earlier lines\n", 0), 0u) << text;
  EXPECT_NE(text.find("saxpy"), std::string::npos) << text;
  const std::string piped = std::string(KERNLENS_BIN) + " analyze " + kInput + " -o /dev/stdout | grep -q saxpy";
  EXPECT_EQ(std::system(piped.c_str()), 0);
}

TEST(CliOutputs, AnOutputThatIsAnInputIsRefused) {
  test::TempDir dir;
  const std::string csv = stats_csv({"k1"});
  dir.write("f.csv", csv);
  fs::create_symlink("f.csv", dir.file("alias.csv"));
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"analyze", dir.file("f.csv"), "-o", dir.file("f.csv")},
           {"analyze", dir.file("f.csv"), "-o", dir.file("alias.csv")},
           {"report", dir.file("f.csv"), "--format", "md", "-o", dir.file("f.csv")},
           {"compare", dir.file("f.csv"), dir.file("f.csv"), "-o", dir.file("f.csv")}}) {
    auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_NE(r.err.find("is also an input"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(dir.file("f.csv")), csv) << args[0] << " overwrote its input";
  }
  ASSERT_EQ(run_cli({"db", "ingest", "--db", dir.file("runs.db"), dir.file("f.csv")}).exit_code, 0);
  const std::string db = slurp(dir.file("runs.db"));
  auto q = run_cli({"db", "query", "--db", dir.file("runs.db"), "-o", dir.file("runs.db"), "SELECT 1"});
  EXPECT_EQ(q.exit_code, 2) << q.err;
  EXPECT_EQ(slurp(dir.file("runs.db")), db);
}

TEST(CliInputs, AnalyzeNeverWritesItsInput) {
  test::TempDir dir;
  const std::string path = dir.file("export.sqlite");
  fs::copy_file(test::fixture("nsys/llama_stages.sqlite"), path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const std::string before = slurp(path);
  auto r = run_cli({"analyze", path, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(path), before);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1u) << "a file was left beside the input";
}

TEST(CliInputs, ADeviceIsRefusedNamingTheFile) {
  test::TempDir dir;
  fs::create_symlink("/dev/zero", dir.file("trace.json"));
  auto r = run_cli({"analyze", dir.file("trace.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "kernlens: error: " + dir.file("trace.json") +
                       ": is a device, not an export file (kernlens reads files and pipes)\n");
}

TEST(CliInputs, AnImpossibleTotalTimeIsAnErrorWithTheLine) {
  test::TempDir dir;
  std::string csv = stats_csv({"k1", "k2"});
  csv.replace(csv.find("2000,1,"), 4, "1e26");
  dir.write("big.csv", csv);
  auto r = run_cli({"analyze", dir.file("big.csv")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir.file("big.csv") + ":3: column 'Total Time'"), std::string::npos) << r.err;
}

// Kernel names that hold escape sequences, newlines and a fake error line, shown in text and
// Markdown: escaped, so they can neither repaint the terminal nor add a line. (A CSV with NUL
// is not text; NUL is escaped the same way, see TextTest.)
TEST(CliNames, ControlCharactersAreEscapedInTextAndMarkdown) {
  test::TempDir dir;
  const std::string evil_name = "k\x1b[2J\x1b]0;owned\x07x\nkernlens: error: fake\r|";
  dir.write("evil.csv", stats_csv({evil_name, "plain_kernel"}));
  ASSERT_EQ(run_cli({"db", "ingest", "--db", dir.file("runs.db"), dir.file("evil.csv")}).exit_code, 0);
  const std::vector<std::vector<std::string>> commands = {
      {"analyze", dir.file("evil.csv")},
      {"analyze", dir.file("evil.csv"), "--format", "md"},
      {"report", dir.file("evil.csv"), "--format", "md"},
      {"db", "query", "--db", dir.file("runs.db"), "SELECT name FROM kernels"},
      {"compare", dir.file("evil.csv"), dir.file("evil.csv")},  // may list no kernel
  };
  for (const auto& args : commands) {
    auto r = run_cli(args);
    ASSERT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << args[0] << " " << args.back();
    EXPECT_EQ(r.out.find('\0'), std::string::npos) << args[0];
    EXPECT_EQ(r.out.find('\r'), std::string::npos) << args[0];
    EXPECT_EQ(r.out.find("\nkernlens: error: fake"), std::string::npos) << args[0];
    if (args[0] != "compare") {
      EXPECT_NE(r.out.find("\\x1b[2J"), std::string::npos) << args[0] << " " << args.back() << ":\n" << r.out;
    }
  }
}

TEST(CliNames, NamesCommandEscapesControlCharacters) {
  test::TempDir dir;
  dir.write("names.txt", "void k\x1b[31m<int>(int)\nplain_kernel\n");
  auto r = run_cli({"names", dir.file("names.txt")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("void k\\x1b[31m<int>(int)\t"), std::string::npos) << r.out;
}

// Invalid UTF-8 in names and tags: replaced by U+FFFD where it enters, so that the database
// and every output format still work.
TEST(CliNames, InvalidUtf8ReadsAsReplacementInEveryOutput) {
  test::TempDir dir;
  const std::string replacement = "\xEF\xBF\xBD";
  dir.write("bad.csv", stats_csv({"gemm_\xff\xfe_kernel", "ok_kernel"}));
  auto ingest = run_cli({"db", "ingest", "--db", dir.file("runs.db"), "--tag", "note=caf\xe9", dir.file("bad.csv")});
  ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
  const std::vector<std::pair<std::vector<std::string>, bool>> commands = {  // args, output is JSON
      {{"analyze", dir.file("bad.csv"), "--format", "json"}, true},
      {{"analyze", dir.file("bad.csv")}, false},
      {{"analyze", dir.file("bad.csv"), "--format", "md"}, false},
      {{"report", dir.file("bad.csv")}, false},
      {{"report", dir.file("bad.csv"), "--format", "md"}, false},
      {{"compare", dir.file("bad.csv"), dir.file("bad.csv"), "--format", "json"}, true},
      {{"db", "query", "--db", dir.file("runs.db"), "--format", "json", "SELECT name FROM kernels"}, true},
      {{"db", "query", "--db", dir.file("runs.db"), "--format", "jsonl", "SELECT value FROM run_tags"}, false},
      {{"db", "query", "--db", dir.file("runs.db"), "--format", "csv", "SELECT name FROM kernels"}, false},
      {{"db", "query", "--db", dir.file("runs.db"), "SELECT name FROM kernels"}, false},
  };
  for (const auto& [args, json] : commands) {
    auto r = run_cli(args);
    ASSERT_EQ(r.exit_code, 0) << args[0] << " " << args.back() << ": " << r.err;
    if (args[0] != "compare") {
      EXPECT_NE(r.out.find(replacement), std::string::npos) << args[0] << " " << args.back();
    }
    EXPECT_EQ(r.out.find("\xff\xfe"), std::string::npos) << args[0] << " " << args.back();
    if (json) {
      EXPECT_TRUE(nlohmann::json::accept(r.out)) << args[0] << " " << args.back();
    }
  }
  auto warned = run_cli({"analyze", dir.file("bad.csv")});
  EXPECT_NE(warned.err.find("1 names or labels are not valid UTF-8"), std::string::npos) << warned.err;
  for (const char* format : {"csv", "jsonl"}) {
    auto r = run_cli({"db", "export", "--db", dir.file("runs.db"), "--format", format, "--out", dir.file(format)});
    ASSERT_EQ(r.exit_code, 0) << format << ": " << r.err;
    const std::string kernels = slurp(dir.file(std::string(format) + "/kernels." + format));
    EXPECT_NE(kernels.find("gemm_" + replacement + replacement + "_kernel"), std::string::npos) << format;
    EXPECT_NE(slurp(dir.file(std::string(format) + "/run_tags." + format)).find("caf" + replacement), std::string::npos);
  }
}

TEST(CliDbQuery, ACommentAfterTheStatementIsFine) {
  test::TempDir dir;
  ASSERT_EQ(run_cli({"db", "ingest", "--db", dir.file("runs.db"), kInput}).exit_code, 0);
  for (const char* sql : {"SELECT 1; -- note", "SELECT 1 /* why */;", "SELECT 1;\n-- a\n-- b\n"}) {
    auto r = run_cli({"db", "query", "--db", dir.file("runs.db"), sql});
    EXPECT_EQ(r.exit_code, 0) << sql << ": " << r.err;
  }
  auto two = run_cli({"db", "query", "--db", dir.file("runs.db"), "SELECT 1; -- note\nSELECT 2"});
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.err.find("one SQL statement"), std::string::npos) << two.err;
}

TEST(CliDbQuery, ARunawayQueryStopsAtTheTimeout) {
  test::TempDir dir;
  ASSERT_EQ(run_cli({"db", "ingest", "--db", dir.file("runs.db"), kInput}).exit_code, 0);
  const std::string endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n";
  const auto start = std::chrono::steady_clock::now();
  auto r = run_cli({"db", "query", "--db", dir.file("runs.db"), "--timeout", "0.5", endless});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ran longer than 0.5 s"), std::string::npos) << r.err;
  EXPECT_LT(seconds, 10);
  auto help = run_cli({"db", "query", "--help"});
  EXPECT_NE(help.out.find("--timeout"), std::string::npos);
}

// fts3_tokenizer(NAME, POINTER) hands SQLite a function pointer from SQL text.
TEST(CliDbQuery, Fts3TokenizerCannotRegisterAPointer) {
  test::TempDir dir;
  ASSERT_EQ(run_cli({"db", "ingest", "--db", dir.file("runs.db"), kInput}).exit_code, 0);
  auto probe = run_cli({"db", "query", "--db", dir.file("runs.db"), "SELECT length(fts3_tokenizer('simple'))"});
  if (probe.exit_code != 0) GTEST_SKIP() << "this SQLite has no FTS3: " << probe.err;
  auto r = run_cli({"db", "query", "--db", dir.file("runs.db"),
                    "SELECT fts3_tokenizer('simple', fts3_tokenizer('simple'))"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("fts3tokenize disabled"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kernlens
