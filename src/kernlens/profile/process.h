// Running a child program (a profiler, or the user's command) under our control: spawned from
// an argv vector (never a shell string) in its own process group, its stdout and stderr each
// copied to a log file, optionally echoed to ours and handed line by line to a callback, a
// wall-clock timeout (SIGTERM to the group, SIGKILL after a grace period), and SIGINT/SIGTERM
// received by kernlens forwarded to the child's group while it runs, escalated as ncu and nsys
// users expect: the first SIGINT is forwarded; a second one, or the child still running after
// a grace period, sends SIGTERM, then SIGKILL. SIGTERM and SIGHUP (the terminal closed) end the
// child's group at once: SIGTERM, then SIGKILL after the grace. When a run ends by interrupt or timeout, what is
// left of the child's process group (a grandchild that ignored the signal) is ended too.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/common/error.h"

namespace kernlens::profile {

enum class OutputStream { kStdout, kStderr };

// Called once per complete line (without its '\n'), in the order the lines arrive on that
// stream; a last line without '\n' is delivered when the stream closes.
using LineCallback = std::function<void(OutputStream stream, std::string_view line)>;

struct ProcessOptions {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH unless it holds a '/'
  std::vector<std::string> env;   // "NAME=VALUE": added to (or replacing in) our environment
  std::string stdout_log_path;    // empty: the child's stdout is not logged
  std::string stderr_log_path;    // empty: the child's stderr is not logged
  bool echo = false;              // copy the child's output to our stdout/stderr as it arrives
  LineCallback on_line;           // may be empty
  std::int64_t timeout_ns = 0;    // wall-clock limit; 0: none
  std::int64_t kill_grace_ns = 5'000'000'000;  // SIGTERM to SIGKILL (timeout, interrupt)
  // After a forwarded SIGINT, how long the child may take to stop (ncu and nsys write their
  // report) before its group gets SIGTERM; a second SIGINT does not wait.
  std::int64_t interrupt_grace_ns = 10'000'000'000;
  bool forward_signals = true;  // forward SIGINT/SIGTERM we receive to the child's group
  // Asked about every `stop_check_period_ns` while the child runs: true ends the child as a
  // timeout does (SIGTERM to its group, SIGKILL after the grace), with `stopped` set. Under a
  // launcher, a rank whose partner died stops its own program run this way.
  std::function<bool()> should_stop;
  std::int64_t stop_check_period_ns = 250'000'000;
};

struct ProcessResult {
  std::optional<int> exit_code;    // set when the child exited normally
  std::optional<int> term_signal;  // set when a signal ended it
  bool timed_out = false;          // we ended it because the timeout passed
  bool interrupted = false;        // we received SIGINT/SIGTERM and forwarded it
  int interrupt_signal = 0;        // the first signal received (SIGINT, SIGTERM or SIGHUP), 0 if none
  bool stopped = false;            // we ended it because should_stop said so
  bool killed = false;             // we had to send SIGKILL after the grace period
  std::vector<int> signals_sent;   // to the child's group, in order (forwarded, escalated)
  std::int64_t wall_ns = 0;        // from spawn to the child being reaped
  int pid = 0;                     // also the process group id
  std::string stdout_log_path;
  std::string stderr_log_path;

  // Exited with code 0, not timed out, not interrupted, not stopped.
  bool succeeded() const { return exit_code == 0 && !timed_out && !interrupted && !stopped; }
  // "exit code 3", "killed by signal 11 (Segmentation fault)", "timed out after 0.30 s", ...
  std::string describe() const;
};

// Runs the child to completion. An Error means it could not be started (not found, not
// executable, log file not writable); a child that fails or crashes is a ProcessResult.
Result<ProcessResult> run_process(const ProcessOptions& options);

// A child left running while kernlens does other work (the deep pass's program started beside
// discovery, early_start.h): in its own process group, stdout and stderr straight into their
// log files (nobody reads pipes meanwhile), no signal forwarding (its owner ends it). Its group
// is killed when the object goes away while the child still runs, and when kernlens dies, even
// by SIGKILL (a watchdog in the group sees kernlens's end of a pipe close).
class BackgroundProcess {
 public:
  // Uses `options`' argv, env and log paths; the rest is for run_process().
  static Result<BackgroundProcess> start(const ProcessOptions& options);
  // The same with its stdout and stderr written to these open files (the log paths unused).
  static Result<BackgroundProcess> start(const ProcessOptions& options, int stdout_fd, int stderr_fd);
  BackgroundProcess(BackgroundProcess&& other) noexcept;
  BackgroundProcess& operator=(BackgroundProcess&& other) noexcept;
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  ~BackgroundProcess();

  int pid() const { return pid_; }  // also its process group
  bool running();                   // false once it exited (it is reaped then; its group is ended)
  // Waits for it to exit; after `timeout_ns` (0: no limit) its group gets SIGTERM, and SIGKILL
  // `kill_grace_ns` later. wall_ns counts from start().
  ProcessResult wait(std::int64_t timeout_ns, std::int64_t kill_grace_ns = 5'000'000'000);
  // The same for a process kernlens no longer needs: past `after_ns` its group is ended as
  // kernlens's own doing (`stopped`), not as a timeout.
  ProcessResult stop_after(std::int64_t after_ns, std::int64_t kill_grace_ns);
  // Kills its group at once and reaps it; nothing when it already exited.
  void kill_group();

 private:
  BackgroundProcess() = default;
  static Result<BackgroundProcess> spawn(const std::string& path, const ProcessOptions& options, int stdout_fd,
                                         int stderr_fd);
  bool reap(bool block);
  // wait() and stop_after(): past the deadline, sets `*ended` and ends the group.
  ProcessResult wait_until(std::int64_t timeout_ns, std::int64_t kill_grace_ns, bool ProcessResult::*ended);
  void release_watchdog();

  int pid_ = 0;
  // A watchdog process in the child's group (process.cpp): it ends the group when this end of
  // its pipe closes, which happens when the child is reaped and when kernlens dies.
  int watchdog_pid_ = 0;
  int watchdog_fd_ = -1;
  bool reaped_ = true;
  int wait_status_ = 0;
  std::int64_t started_ns_ = 0;  // steady clock
  ProcessResult result_;
};

// The path `name` would be run from: itself when it holds a '/', else the first executable
// file of that name in the directories of `path_env` (a PATH-style list).
Result<std::string> find_executable(std::string_view name, std::string_view path_env);
// The same with our own PATH.
Result<std::string> find_executable(std::string_view name);

// What a short command printed (for `--version` and the like): both streams, line by line.
struct CapturedOutput {
  ProcessResult result;
  std::string stdout_text;
  std::string stderr_text;
};
Result<CapturedOutput> run_and_capture(const std::vector<std::string>& argv,
                                       std::int64_t timeout_ns);

// A short command started now and read later, so that several run at once and beside
// discovery (ncu's version and sections, nvidia-smi: tools.h, env_probe.h). A BackgroundProcess
// whose streams go to two anonymous in-memory files (memfd): run_process handles one child at a
// time, and files without a name leave nothing behind however kernlens ends (a second Ctrl-C
// leaves with _exit, interrupt.h). A child still running when the capture is dropped is killed.
class PendingCapture {
 public:
  static Result<PendingCapture> start(const std::vector<std::string>& argv, std::int64_t timeout_ns);
  PendingCapture(PendingCapture&& other) noexcept;
  PendingCapture& operator=(PendingCapture&& other) noexcept;
  PendingCapture(const PendingCapture&) = delete;
  PendingCapture& operator=(const PendingCapture&) = delete;
  ~PendingCapture();

  // Waits for what is left of the timeout (counted from start: SIGTERM to its group then,
  // SIGKILL a second later) and reads what it printed. Once only.
  Result<CapturedOutput> finish();

 private:
  PendingCapture() = default;
  void close_files();

  std::optional<BackgroundProcess> process_;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  std::int64_t deadline_ns_ = 0;  // steady clock
};

// What a capture printed, or why it could not start.
Result<CapturedOutput> finish_capture(Result<PendingCapture>& pending);

}  // namespace kernlens::profile
