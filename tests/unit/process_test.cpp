#include "kernlens/profile/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <chrono>
#include <fstream>
#include <thread>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace kernlens::profile {
namespace {

std::string fake_tool(const std::string& name) {
  return test::fixture("fake_tools/" + name);
}

struct Line {
  OutputStream stream;
  std::string text;
};

constexpr std::int64_t kShortTimeoutNs = 300'000'000;  // 0.3 s: keeps the suite fast
constexpr std::int64_t kShortGraceNs = 200'000'000;

TEST(RunProcess, CapturesLogsAndLinesAndExitCode) {
  test::TempDir dir;
  ProcessOptions options;
  options.argv = {fake_tool("fake_ncu_run.sh"), "3"};
  options.stdout_log_path = dir.file("stdout.log");
  options.stderr_log_path = dir.file("stderr.log");
  std::vector<Line> lines;
  options.on_line = [&](OutputStream s, std::string_view l) {
    lines.push_back({s, std::string(l)});
  };

  auto result = run_process(options);
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_FALSE(result->term_signal.has_value());
  EXPECT_FALSE(result->succeeded());
  EXPECT_FALSE(result->timed_out);
  EXPECT_FALSE(result->interrupted);
  EXPECT_GT(result->wall_ns, 0);
  EXPECT_GT(result->pid, 0);
  EXPECT_EQ(result->describe(), "exit code 3");

  // The logs hold the child's bytes exactly.
  std::string expected_stdout = test::file_text(fake_tool("ncu_prof_lines.log"));
  EXPECT_EQ(test::file_text(options.stdout_log_path), expected_stdout);
  EXPECT_EQ(test::file_text(options.stderr_log_path), "==ERROR== fake ncu: done\n");
  EXPECT_EQ(result->stdout_log_path, options.stdout_log_path);

  // Every line reached the callback whole, in order, tagged with its stream.
  int profiling_lines = 0;
  std::string joined_stdout;
  for (const Line& line : lines) {
    EXPECT_EQ(line.text.find('\n'), std::string::npos);
    if (line.stream == OutputStream::kStdout) joined_stdout += line.text + "\n";
    if (line.text.rfind("==PROF== Profiling \"", 0) == 0) ++profiling_lines;
  }
  EXPECT_EQ(joined_stdout, expected_stdout);
  EXPECT_EQ(profiling_lines, 7);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().stream, OutputStream::kStderr);
  EXPECT_EQ(lines.back().text, "==ERROR== fake ncu: done");
}

TEST(RunProcess, SucceedsOnExitZero) {
  ProcessOptions options;
  options.argv = {fake_tool("fake_ncu_run.sh"), "0"};
  auto result = run_process(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->succeeded());
  EXPECT_TRUE(result->stdout_log_path.empty());
}

TEST(RunProcess, EchoCopiesTheChildsOutputToOurs) {
  ProcessOptions options;
  options.argv = {fake_tool("fake_ncu_run.sh"), "0"};
  options.echo = true;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  auto result = run_process(options);
  std::string our_stdout = testing::internal::GetCapturedStdout();
  std::string our_stderr = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(our_stdout, test::file_text(fake_tool("ncu_prof_lines.log")));
  EXPECT_EQ(our_stderr, "==ERROR== fake ncu: done\n");
}

TEST(RunProcess, DeliversLinesSplitAcrossWritesAndALastLineWithoutNewline) {
  std::vector<Line> lines;
  ProcessOptions options;
  options.argv = {fake_tool("partial_line.sh")};
  options.on_line = [&](OutputStream s, std::string_view l) {
    lines.push_back({s, std::string(l)});
  };
  auto result = run_process(options);
  ASSERT_TRUE(result.ok());
  std::vector<std::string> out, err;
  for (const Line& line : lines)
    (line.stream == OutputStream::kStdout ? out : err).push_back(line.text);
  EXPECT_EQ(out, (std::vector<std::string>{
                     "==PROF== Profiling \"Kernel2\" - 5: 0%....50%....100% - 10 passes",
                     "no newline at end"}));
  EXPECT_EQ(err, (std::vector<std::string>{"....100% - 10 passes", "err one"}));
}

TEST(RunProcess, MissingProgramIsAClearError) {
  ProcessOptions options;
  options.argv = {"kernlens-no-such-program-xyz", "--version"};
  auto result = run_process(options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "cannot run 'kernlens-no-such-program-xyz': not found on PATH");

  options.argv = {"/nonexistent/dir/ncu"};
  auto by_path = run_process(options);
  ASSERT_FALSE(by_path.ok());
  EXPECT_NE(by_path.error().message.find("'/nonexistent/dir/ncu'"), std::string::npos);
}

TEST(RunProcess, EmptyArgvAndUnwritableLogAreErrors) {
  ProcessOptions options;
  EXPECT_FALSE(run_process(options).ok());
  options.argv = {fake_tool("fake_ncu_run.sh")};
  options.stdout_log_path = "/nonexistent/dir/stdout.log";
  auto result = run_process(options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().file, "/nonexistent/dir/stdout.log");
}

TEST(RunProcess, TimeoutTerminatesTheWholeGroup) {
  ProcessOptions options;
  options.argv = {fake_tool("hang.sh")};
  options.timeout_ns = kShortTimeoutNs;
  options.kill_grace_ns = 5'000'000'000;  // SIGTERM suffices; the grace must not be waited out
  auto result = run_process(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->timed_out);
  EXPECT_FALSE(result->killed);
  EXPECT_EQ(result->term_signal, SIGTERM);
  EXPECT_FALSE(result->succeeded());
  EXPECT_GE(result->wall_ns, kShortTimeoutNs);
  // Returning long before `sleep 30` ends shows the sleep (the grandchild) was ended too:
  // it holds the pipes, so we would otherwise wait for it.
  EXPECT_LT(result->wall_ns, 3'000'000'000);
  EXPECT_NE(result->describe().find("timed out"), std::string::npos);
}

TEST(RunProcess, TimeoutEscalatesToSigkillAfterTheGrace) {
  ProcessOptions options;
  options.argv = {fake_tool("ignore_term.sh")};
  options.timeout_ns = kShortTimeoutNs;
  options.kill_grace_ns = kShortGraceNs;
  auto result = run_process(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->timed_out);
  EXPECT_TRUE(result->killed);
  EXPECT_EQ(result->term_signal, SIGKILL);
  EXPECT_GE(result->wall_ns, kShortTimeoutNs + kShortGraceNs);
  EXPECT_LT(result->wall_ns, 3'000'000'000);
}

TEST(RunProcess, RecordsACrash) {
  ProcessOptions options;
  options.argv = {fake_tool("crash.sh")};
  auto result = run_process(options);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->exit_code.has_value());
  EXPECT_EQ(result->term_signal, SIGSEGV);
  EXPECT_FALSE(result->timed_out);
  EXPECT_EQ(result->describe().rfind("killed by signal 11", 0), 0u) << result->describe();
}

extern "C" void test_marker_handler(int) {}

TEST(RunProcess, ForwardsSigintToTheChildGroupAndRestoresHandlers) {
  test::TempDir dir;
  std::string marker = dir.file("marker");
  // A handler of our own, which must be back in place after the run.
  struct sigaction mine {
  }, before{};
  mine.sa_handler = test_marker_handler;
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &mine, &before), 0);

  ProcessOptions options;
  options.argv = {fake_tool("trap_int.sh"), marker};
  options.timeout_ns = 10'000'000'000;  // a safety net only
  options.on_line = [](OutputStream, std::string_view line) {
    if (line == "ready") ::raise(SIGINT);  // as if the user pressed Ctrl-C now
  };
  auto result = run_process(options);

  struct sigaction after {};
  sigaction(SIGINT, nullptr, &after);
  sigaction(SIGINT, &before, nullptr);
  EXPECT_EQ(after.sa_handler, test_marker_handler);

  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->interrupted);
  EXPECT_EQ(result->interrupt_signal, SIGINT);
  EXPECT_FALSE(result->timed_out);
  EXPECT_EQ(result->exit_code, 130);  // the child's own trap ran: it received SIGINT
  EXPECT_EQ(test::file_text(marker), "got SIGINT\n");
  EXPECT_FALSE(result->succeeded());
  EXPECT_NE(result->describe().find("interrupted by SIGINT"), std::string::npos);
}

// SIGTERM, and SIGHUP (the terminal closed: its default action would end kernlens and leave the
// child's group, its own process group that the terminal's hangup does not reach, running), end
// the child's group at once.
TEST(RunProcess, SigtermAndSighupEndTheChildsGroup) {
  for (int sig : {SIGTERM, SIGHUP}) {
    ProcessOptions options;
    options.argv = {fake_tool("hang.sh")};
    options.timeout_ns = 10'000'000'000;
    options.on_line = [sig](OutputStream, std::string_view line) {
      if (line == "hanging") ::raise(sig);
    };
    auto result = run_process(options);
    ASSERT_TRUE(result.ok());
    EXPECT_TRUE(result->interrupted);
    EXPECT_EQ(result->interrupt_signal, sig);
    EXPECT_EQ(result->term_signal, SIGTERM);
    EXPECT_NE(result->describe().find(sig == SIGHUP ? "interrupted by SIGHUP" : "interrupted by SIGTERM"),
              std::string::npos)
        << result->describe();
    // describe() names the signals it took: SIGKILL here means something of the group outlived
    // SIGTERM (a flake seen when the whole test binary ran in one process).
    EXPECT_LT(result->wall_ns, 3'000'000'000) << result->describe();
  }
}

// As ncu and nsys users expect: a second Ctrl-C does not wait for a child that ignores the
// first one: SIGTERM at once, then SIGKILL after the grace.
TEST(RunProcess, SecondSigintEscalatesToSigtermThenSigkill) {
  ProcessOptions options;
  options.argv = {fake_tool("ignore_int_term.sh")};
  options.kill_grace_ns = kShortGraceNs;
  options.interrupt_grace_ns = 60'000'000'000;  // only the second Ctrl-C may end it early
  options.timeout_ns = 20'000'000'000;          // a safety net only
  int ticks = 0;
  options.on_line = [&](OutputStream, std::string_view line) {
    if (line == "ready") ::raise(SIGINT);
    if (line == "tick" && ++ticks == 2) ::raise(SIGINT);
  };
  auto result = run_process(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->interrupted);
  EXPECT_FALSE(result->timed_out);
  EXPECT_TRUE(result->killed);
  EXPECT_EQ(result->term_signal, SIGKILL);
  EXPECT_EQ(result->signals_sent, (std::vector<int>{SIGINT, SIGTERM, SIGKILL}));
  EXPECT_LT(result->wall_ns, 5'000'000'000);
  EXPECT_NE(result->describe().find("(sent SIGINT, SIGTERM, SIGKILL to its process group)"), std::string::npos)
      << result->describe();
}

// One Ctrl-C, and a child that ignores it: the grace period ends it all the same.
TEST(RunProcess, OneSigintEscalatesAfterTheGracePeriod) {
  ProcessOptions options;
  options.argv = {fake_tool("ignore_int_term.sh")};
  options.kill_grace_ns = kShortGraceNs;
  options.interrupt_grace_ns = kShortGraceNs;
  options.timeout_ns = 20'000'000'000;
  options.on_line = [](OutputStream, std::string_view line) {
    if (line == "ready") ::raise(SIGINT);
  };
  auto result = run_process(options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->interrupted);
  EXPECT_EQ(result->term_signal, SIGKILL);
  EXPECT_EQ(result->signals_sent, (std::vector<int>{SIGINT, SIGTERM, SIGKILL}));
  EXPECT_LT(result->wall_ns, 5'000'000'000);
}

// Whether `pid` still runs (a zombie waiting for its reaper does not).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z' && text[close + 2] != 'X';
}

// The child exits on Ctrl-C, but its own child ignores SIGINT (and SIGTERM) and holds none of
// our pipes: it must not outlive the run.
TEST(RunProcess, AnInterruptEndsGrandchildrenThatIgnoreIt) {
  test::TempDir dir;
  ProcessOptions options;
  options.argv = {fake_tool("leave_grandchild.sh"), dir.file("pid")};
  options.kill_grace_ns = kShortGraceNs;
  options.timeout_ns = 20'000'000'000;
  options.on_line = [](OutputStream, std::string_view line) {
    if (line == "ready") ::raise(SIGINT);
  };
  auto result = run_process(options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->exit_code, 130);
  const pid_t grandchild = std::stoi(test::file_text(dir.file("pid")));
  for (int i = 0; i < 100 && running(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(running(grandchild)) << "grandchild " << grandchild << " outlived the interrupted run";
  if (running(grandchild)) ::kill(grandchild, SIGKILL);
  EXPECT_EQ(result->signals_sent, (std::vector<int>{SIGINT, SIGTERM, SIGKILL}));
}

TEST(FindExecutable, SearchesThePathListInOrder) {
  std::string bin = test::fixture("fake_tools/bin");
  auto found = find_executable("ncu", "/nonexistent:" + bin + ":/usr/bin");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, bin + "/ncu");
  // A data file of that name is not a program.
  EXPECT_FALSE(find_executable("README.md", test::fixture("fake_tools")).ok());
  EXPECT_FALSE(find_executable("ncu", "/nonexistent").ok());
}

TEST(RunAndCapture, CollectsBothStreams) {
  auto captured = run_and_capture({fake_tool("fake_ncu_run.sh"), "0"}, kShortTimeoutNs * 10);
  ASSERT_TRUE(captured.ok());
  EXPECT_TRUE(captured->result.succeeded());
  EXPECT_EQ(captured->stdout_text, test::file_text(fake_tool("ncu_prof_lines.log")));
  EXPECT_EQ(captured->stderr_text, "==ERROR== fake ncu: done\n");
}

// Several at once, read later: the same text as run_and_capture, and a child's folder goes
// when it is read.
TEST(PendingCapture, RunsSeveralAtOnceAndReadsBothStreamsLater) {
  auto first = PendingCapture::start({fake_tool("fake_ncu_run.sh"), "0"}, kShortTimeoutNs * 10);
  auto second = PendingCapture::start({"sh", "-c", "printf 'a\\nb'; echo oops >&2; exit 3"}, kShortTimeoutNs * 10);
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  ASSERT_TRUE(second.ok()) << second.error().to_string();
  auto a = first->finish();
  auto b = second->finish();
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(a->result.succeeded());
  EXPECT_EQ(a->stdout_text, test::file_text(fake_tool("ncu_prof_lines.log")));
  EXPECT_EQ(a->stderr_text, "==ERROR== fake ncu: done\n");
  EXPECT_EQ(b->result.exit_code, 3);
  EXPECT_EQ(b->stdout_text, "a\nb");
  EXPECT_EQ(b->stderr_text, "oops\n");
  EXPECT_FALSE(first->finish().ok());  // once only
}

// The timeout counts from the start, not from finish(): a child still running then is ended.
TEST(PendingCapture, TimeoutCountsFromTheStart) {
  auto pending = PendingCapture::start({"sleep", "30"}, kShortTimeoutNs);
  ASSERT_TRUE(pending.ok());
  ::usleep(static_cast<useconds_t>(kShortTimeoutNs / 1000 * 2));
  const auto before = std::chrono::steady_clock::now();
  auto done = pending->finish();
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->result.timed_out);
  EXPECT_FALSE(done->result.succeeded());
  // Past its deadline already, it was signalled at once (SIGTERM ends sleep).
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(2));
}

// Dropped unread, the child is killed.
TEST(PendingCapture, DroppedUnreadKillsTheChild) {
  test::TempDir dir;
  const std::string pid_file = dir.file("pid");
  {
    auto pending = PendingCapture::start({"sh", "-c", "echo $$ > " + pid_file + "; exec sleep 30"}, kShortTimeoutNs * 100);
    ASSERT_TRUE(pending.ok());
    // The shell makes the file, then writes its pid: wait for the pid, not only the file.
    auto written = [&] { return std::filesystem::exists(pid_file) && std::filesystem::file_size(pid_file) > 0; };
    for (int i = 0; i < 200 && !written(); ++i) ::usleep(10'000);
  }
  std::ifstream in(pid_file);
  int pid = 0;
  in >> pid;
  ASSERT_GT(pid, 0);
  EXPECT_NE(::kill(pid, 0), 0);  // reaped: gone
}

// A second Ctrl-C leaves kernlens with _exit (interrupt.cpp): no destructor runs, so whatever a
// capture put in the temporary directory would stay there. It puts nothing there.
TEST(PendingCapture, LeavesNothingInTheTemporaryDirectoryWhenKernlensExitsAtOnce) {
  test::TempDir tmp;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setenv("TMPDIR", tmp.path().string().c_str(), 1);
    auto finished = PendingCapture::start({"sh", "-c", "echo done"}, kShortTimeoutNs * 100);
    auto running = PendingCapture::start({"sh", "-c", "echo started; exec sleep 30"}, kShortTimeoutNs * 100);
    ::usleep(200'000);
    ::_exit(finished.ok() && running.ok() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

}  // namespace
}  // namespace kernlens::profile
