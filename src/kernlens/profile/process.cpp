#include "kernlens/profile/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "kernlens/common/file.h"

extern char** environ;

namespace kernlens::profile {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t ns_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

std::string errno_text(int err) {
  return std::strerror(err);
}

// A file descriptor closed when it goes out of scope.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// --- Signal forwarding -------------------------------------------------------------------
// The handler only counts the signals and wakes poll() through a self-pipe; the run loop does
// the forwarding and the escalation, so nothing unsafe happens inside the handler.

volatile sig_atomic_t g_forwarded_count = 0;  // received during this run
volatile sig_atomic_t g_forwarded_first = 0;
int g_wake_fd = -1;
std::atomic<bool> g_run_active{false};

extern "C" void on_forwarded_signal(int sig) {
  int saved_errno = errno;
  if (g_forwarded_first == 0) g_forwarded_first = sig;
  g_forwarded_count = g_forwarded_count + 1;
  if (g_wake_fd >= 0) {
    char byte = 1;
    [[maybe_unused]] ssize_t n = ::write(g_wake_fd, &byte, 1);
  }
  errno = saved_errno;
}

// Installs the forwarding handlers for its lifetime; the previous dispositions come back after.
class SignalForwarding {
 public:
  explicit SignalForwarding(int wake_fd) {
    g_forwarded_count = 0;
    g_forwarded_first = 0;
    g_wake_fd = wake_fd;
    struct sigaction action {};
    action.sa_handler = on_forwarded_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_int_);
    sigaction(SIGTERM, &action, &previous_term_);
    sigaction(SIGHUP, &action, &previous_hup_);
  }
  ~SignalForwarding() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
    sigaction(SIGHUP, &previous_hup_, nullptr);
    g_wake_fd = -1;
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
  struct sigaction previous_hup_ {};
};

// --- Output handling -----------------------------------------------------------------------

// One of the child's output streams: the pipe we read, its log, and the partial line so far.
struct StreamPump {
  OutputStream stream = OutputStream::kStdout;
  Fd pipe;
  Fd log;
  int echo_fd = -1;  // -1: no echo
  std::string partial_line;

  bool open() const { return pipe.get() >= 0; }
};

void emit_lines(StreamPump& pump, const LineCallback& on_line, bool at_eof) {
  if (!on_line) return;
  std::size_t start = 0;
  for (std::size_t nl; (nl = pump.partial_line.find('\n', start)) != std::string::npos;
       start = nl + 1) {
    on_line(pump.stream, std::string_view(pump.partial_line).substr(start, nl - start));
  }
  pump.partial_line.erase(0, start);
  if (at_eof && !pump.partial_line.empty()) {
    on_line(pump.stream, pump.partial_line);
    pump.partial_line.clear();
  }
}

// Reads what is available; closes the pipe at end of file.
void pump_once(StreamPump& pump, const LineCallback& on_line) {
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(pump.pipe.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {  // end of file, or an error we cannot recover from: stop reading
      pump.pipe.reset();
      emit_lines(pump, on_line, /*at_eof=*/true);
      return;
    }
    std::string_view bytes(buffer, static_cast<std::size_t>(n));
    if (pump.log.get() >= 0) write_all_fd(pump.log.get(), bytes);
    if (pump.echo_fd >= 0) write_all_fd(pump.echo_fd, bytes);
    if (on_line) {
      pump.partial_line.append(bytes);
      emit_lines(pump, on_line, /*at_eof=*/false);
    }
  }
}

Result<Fd> open_log(const std::string& path) {
  if (path.empty()) return Fd();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(path, 0, "cannot write log file: " + errno_text(errno));
  return Fd(fd);
}

struct Pipe {
  Fd read_end;
  Fd write_end;
};

Result<Pipe> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return make_error("", 0, "pipe: " + errno_text(errno));
  Pipe p{Fd(fds[0]), Fd(fds[1])};
  return p;
}

void set_nonblocking(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// --- Spawning ------------------------------------------------------------------------------

// Starts `path` with `argv` in a new process group, stdout and stderr on the given pipes, the
// signals we handle reset to their defaults (a child must not inherit an ignored SIGINT).
// Our environment with `overrides` ("NAME=VALUE") replacing or adding variables.
std::vector<std::string> child_environment(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  auto overridden = [&](std::string_view entry) {
    std::string_view name = entry.substr(0, entry.find('='));
    for (const auto& o : overrides) {
      if (std::string_view(o).substr(0, o.find('=')) == name) return true;
    }
    return false;
  };
  for (char** e = environ; e && *e; ++e) {
    if (!overridden(*e)) env.emplace_back(*e);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> c;
  c.reserve(strings.size() + 1);
  for (const std::string& s : strings) c.push_back(const_cast<char*>(s.c_str()));
  c.push_back(nullptr);
  return c;
}

Result<pid_t> spawn_in_new_group(const std::string& path, const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env_overrides, int stdout_fd, int stderr_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, stderr_fd, STDERR_FILENO);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGQUIT, SIGHUP}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  sigset_t empty_mask;
  sigemptyset(&empty_mask);
  posix_spawnattr_setsigmask(&attr, &empty_mask);
  posix_spawnattr_setflags(&attr, static_cast<short>(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                                     POSIX_SPAWN_SETSIGMASK));

  std::vector<char*> c_argv = c_strings(argv);
  const std::vector<std::string> env = env_overrides.empty() ? std::vector<std::string>{} : child_environment(env_overrides);
  std::vector<char*> c_env = c_strings(env);

  pid_t pid = 0;
  int err = posix_spawn(&pid, path.c_str(), &actions, &attr, c_argv.data(), env_overrides.empty() ? environ : c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (err != 0) return make_error("", 0, "cannot run '" + argv[0] + "': " + errno_text(err));
  return pid;
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// --- The run loop --------------------------------------------------------------------------

struct RunState {
  pid_t pid = 0;
  bool exited = false;  // the child exited; a zombie until reaped, so its group id stays ours
  bool reaped = false;  // after this, its id is free and its group no longer ours to signal
  int wait_status = 0;
  Clock::time_point start;
  std::optional<Clock::time_point> timeout_at;
  std::optional<Clock::time_point> next_stop_check;  // when should_stop is asked next
  std::optional<Clock::time_point> escalate_at;  // SIGTERM after a forwarded SIGINT's grace
  bool term_sent = false;                        // SIGTERM went to the group
  std::optional<Clock::time_point> kill_at;      // SIGKILL once SIGTERM's grace is over
  std::optional<Clock::time_point> drain_until;  // after the exit: how long to wait for EOF
  int signals_handled = 0;
  bool group_empty = false;  // nothing but the child is left in its group
};

// Whether the child exited, without reaping it (WNOWAIT): as long as it is a zombie, no other
// process can get its id, so signalling its group reaches only what it left behind.
void check_exit(RunState& state) {
  if (state.exited) return;
  siginfo_t info{};
  int r;
  do {
    r = ::waitid(P_PID, static_cast<id_t>(state.pid), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (r < 0 && errno == EINTR);
  if ((r == 0 && info.si_pid == state.pid) || (r < 0 && errno == ECHILD)) state.exited = true;
}

void reap(RunState& state) {
  while (::waitpid(state.pid, &state.wait_status, 0) < 0 && errno == EINTR) {
  }
  state.reaped = true;
}

// A live process other than `leader` in the process group `leader` (from /proc: the fifth field
// of /proc/PID/stat, after the command name in parentheses, is the group; the third the state).
bool group_has_others(pid_t leader) {
  DIR* proc = ::opendir("/proc");
  if (!proc) return false;
  bool found = false;
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == leader) continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    Fd fd(::open(path, O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) continue;
    char buffer[512];
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer - 1);
    if (n <= 0) continue;
    buffer[n] = '\0';
    const char* after_name = std::strrchr(buffer, ')');
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (!after_name || std::sscanf(after_name + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3) continue;
    if (pgrp == leader && state != 'Z' && state != 'X') {
      found = true;
      break;
    }
  }
  ::closedir(proc);
  return found;
}

// The run ends by our doing (interrupt, timeout): nothing of the child's group may outlive it.
bool ending(const ProcessResult& result) { return result.interrupted || result.timed_out || result.stopped; }

void send_to_group(const RunState& state, ProcessResult& result, int sig) {
  if (state.reaped) return;
  ::kill(-state.pid, sig);
  result.signals_sent.push_back(sig);
}

// SIGTERM to the group, SIGKILL when it is still there kill_grace_ns later.
void terminate_group(RunState& state, const ProcessOptions& options, ProcessResult& result) {
  if (state.term_sent) return;
  state.term_sent = true;
  send_to_group(state, result, SIGTERM);
  state.kill_at = Clock::now() + std::chrono::nanoseconds(options.kill_grace_ns);
}

void kill_group(const RunState& state, ProcessResult& result) {
  if (result.killed) return;
  result.killed = true;
  send_to_group(state, result, SIGKILL);
}

// Milliseconds poll() may sleep before the next deadline; -1 when there is none.
int poll_timeout_ms(const RunState& state, bool pipes_open, bool watch_group) {
  std::optional<Clock::time_point> next;
  auto consider = [&](const std::optional<Clock::time_point>& t) {
    if (t && (!next || *t < *next)) next = t;
  };
  if (!state.exited) consider(state.timeout_at);
  if (!state.exited) consider(state.next_stop_check);
  if (!state.term_sent) consider(state.escalate_at);
  consider(state.kill_at);
  consider(state.drain_until);
  // With both pipes closed nothing wakes us when the child exits, so look every 10 ms; the
  // same while waiting for what is left of an ended group.
  int cap_ms = pipes_open && !watch_group ? -1 : 10;
  if (!next) return cap_ms;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*next - Clock::now()).count();
  int left_ms = static_cast<int>(std::max<std::int64_t>(0, left + 1));
  return cap_ms < 0 ? left_ms : std::min(left_ms, cap_ms);
}

void check_deadlines(RunState& state, const ProcessOptions& options, ProcessResult& result) {
  auto now = Clock::now();
  if (state.timeout_at && !result.timed_out && !state.exited && now >= *state.timeout_at) {
    result.timed_out = true;
    terminate_group(state, options, result);
  }
  if (state.next_stop_check && !state.exited && !ending(result) && now >= *state.next_stop_check) {
    state.next_stop_check = now + std::chrono::nanoseconds(options.stop_check_period_ns);
    if (options.should_stop()) {
      result.stopped = true;
      terminate_group(state, options, result);
    }
  }
  if (state.escalate_at && now >= *state.escalate_at) terminate_group(state, options, result);
  if (state.kill_at && now >= *state.kill_at) kill_group(state, result);
}

// The first signal is forwarded (SIGTERM at once starts the SIGKILL grace); the second sends
// SIGTERM without waiting for the grace; a third, SIGKILL.
void handle_signals(int wake_fd, RunState& state, const ProcessOptions& options, ProcessResult& result) {
  char drain[64];
  while (::read(wake_fd, drain, sizeof drain) > 0) {
  }
  const int received = g_forwarded_count;
  while (state.signals_handled < received) {
    if (++state.signals_handled == 1) {
      result.interrupted = true;
      result.interrupt_signal = g_forwarded_first;
      if (result.interrupt_signal == SIGINT) {
        send_to_group(state, result, SIGINT);
        state.escalate_at = Clock::now() + std::chrono::nanoseconds(options.interrupt_grace_ns);
      } else {
        terminate_group(state, options, result);
      }
    } else if (!state.term_sent) {
      terminate_group(state, options, result);
    } else {
      kill_group(state, result);
    }
  }
}

// After an interrupt or a timeout, once the child is gone: SIGTERM to what is left of its
// group (a grandchild that ignored SIGINT), SIGKILL after the grace.
void end_leftovers(RunState& state, const ProcessOptions& options, ProcessResult& result) {
  if (!state.exited || !ending(result) || state.group_empty) return;
  if (!group_has_others(state.pid)) {
    state.group_empty = true;
    return;
  }
  terminate_group(state, options, result);
}

}  // namespace

std::string ProcessResult::describe() const {
  std::string text;
  if (exit_code) {
    text = "exit code " + std::to_string(*exit_code);
  } else if (term_signal) {
    text =
        "killed by signal " + std::to_string(*term_signal) + " (" + strsignal(*term_signal) + ")";
  } else {
    text = "did not finish";
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", static_cast<double>(wall_ns) / 1e9);
  if (timed_out) text += ", timed out after " + std::string(seconds) + " s";
  if (stopped) text += ", stopped by kernlens after " + std::string(seconds) + " s";
  if (interrupted) {
    text += std::string(", interrupted by ") + (interrupt_signal == SIGTERM  ? "SIGTERM"
                                                : interrupt_signal == SIGHUP ? "SIGHUP"
                                                                             : "SIGINT");
  }
  // What it took to end it, when the first signal was not enough.
  if (signals_sent.size() > 1 || (timed_out && killed)) {
    text += " (sent";
    for (std::size_t i = 0; i < signals_sent.size(); ++i) {
      text += std::string(i == 0 ? " " : ", ") + (signals_sent[i] == SIGINT    ? "SIGINT"
                                                  : signals_sent[i] == SIGTERM ? "SIGTERM"
                                                                               : "SIGKILL");
    }
    text += " to its process group)";
  }
  return text;
}

Result<std::string> find_executable(std::string_view name, std::string_view path_env) {
  std::string name_str(name);
  if (name.empty()) return make_error("", 0, "cannot run an empty program name");
  if (name.find('/') != std::string_view::npos) {
    if (is_executable_file(name_str)) return name_str;
    return make_error("", 0, "cannot run '" + name_str + "': no executable file at that path");
  }
  while (true) {
    std::size_t colon = path_env.find(':');
    std::string_view dir = path_env.substr(0, colon);
    std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + name_str;
    if (is_executable_file(candidate)) return candidate;
    if (colon == std::string_view::npos) break;
    path_env.remove_prefix(colon + 1);
  }
  return make_error("", 0, "cannot run '" + name_str + "': not found on PATH");
}

Result<std::string> find_executable(std::string_view name) {
  const char* path_env = std::getenv("PATH");
  return find_executable(name, path_env ? path_env : "/usr/local/bin:/usr/bin:/bin");
}

namespace {

// The program options.argv names, found on PATH.
Result<std::string> program_path(const ProcessOptions& options) {
  if (options.argv.empty()) return make_error("", 0, "cannot run an empty command");
  return find_executable(options.argv[0]);
}

}  // namespace

Result<ProcessResult> run_process(const ProcessOptions& options) {
  auto path = program_path(options);
  if (!path) return path.error();
  // The handlers and the wake pipe are process-wide: one child at a time.
  if (g_run_active.exchange(true)) {
    return make_error("", 0, "cannot run '" + options.argv[0] + "': another child is running");
  }
  struct ClearActive {
    ~ClearActive() { g_run_active = false; }
  } clear_active;

  auto stdout_log = open_log(options.stdout_log_path);
  if (!stdout_log) return stdout_log.error();
  auto stderr_log = open_log(options.stderr_log_path);
  if (!stderr_log) return stderr_log.error();
  auto out_pipe = make_pipe();
  if (!out_pipe) return out_pipe.error();
  auto err_pipe = make_pipe();
  if (!err_pipe) return err_pipe.error();
  auto wake_pipe = make_pipe();
  if (!wake_pipe) return wake_pipe.error();
  set_nonblocking(wake_pipe->read_end.get());
  set_nonblocking(wake_pipe->write_end.get());

  std::optional<SignalForwarding> forwarding;
  if (options.forward_signals) forwarding.emplace(wake_pipe->write_end.get());

  RunState state;
  state.start = Clock::now();
  auto pid =
      spawn_in_new_group(*path, options.argv, options.env, out_pipe->write_end.get(), err_pipe->write_end.get());
  if (!pid) return pid.error();
  state.pid = *pid;
  out_pipe->write_end.reset();  // only the child writes; EOF comes when it (and its own) close
  err_pipe->write_end.reset();
  if (options.timeout_ns > 0)
    state.timeout_at = state.start + std::chrono::nanoseconds(options.timeout_ns);
  if (options.should_stop)
    state.next_stop_check = state.start + std::chrono::nanoseconds(options.stop_check_period_ns);

  ProcessResult result;
  result.pid = state.pid;
  result.stdout_log_path = options.stdout_log_path;
  result.stderr_log_path = options.stderr_log_path;

  StreamPump pumps[2];
  pumps[0].stream = OutputStream::kStdout;
  pumps[0].pipe = std::move(out_pipe->read_end);
  pumps[0].log = std::move(*stdout_log);
  pumps[0].echo_fd = options.echo ? STDOUT_FILENO : -1;
  pumps[1].stream = OutputStream::kStderr;
  pumps[1].pipe = std::move(err_pipe->read_end);
  pumps[1].log = std::move(*stderr_log);
  pumps[1].echo_fd = options.echo ? STDERR_FILENO : -1;
  for (StreamPump& pump : pumps) set_nonblocking(pump.pipe.get());

  while (true) {
    end_leftovers(state, options, result);
    bool pipes_open = pumps[0].open() || pumps[1].open();
    if (state.exited && (ending(result) ? state.group_empty : !pipes_open)) break;
    // A grandchild outside our reach may hold the pipes open after the child exits: give it a
    // moment to finish writing, then stop.
    if (state.exited && !ending(result) && !state.drain_until)
      state.drain_until = Clock::now() + std::chrono::seconds(2);
    if (state.drain_until && Clock::now() >= *state.drain_until) break;

    pollfd fds[3];
    nfds_t count = 0;
    fds[count++] = {wake_pipe->read_end.get(), POLLIN, 0};
    for (StreamPump& pump : pumps) {
      if (pump.open()) fds[count++] = {pump.pipe.get(), POLLIN, 0};
    }
    int ready = ::poll(fds, count, poll_timeout_ms(state, pipes_open, state.exited && ending(result)));
    if (ready < 0 && errno != EINTR) break;
    handle_signals(wake_pipe->read_end.get(), state, options, result);
    for (StreamPump& pump : pumps) {
      if (pump.open()) pump_once(pump, options.on_line);
    }
    check_exit(state);
    check_deadlines(state, options, result);
  }
  // Stopped early (drain limit or poll failure): make sure the child is gone.
  if (!state.exited) ::kill(-state.pid, SIGKILL);
  reap(state);
  for (StreamPump& pump : pumps) {
    if (pump.open()) pump_once(pump, options.on_line);
    emit_lines(pump, options.on_line, /*at_eof=*/true);
  }
  handle_signals(wake_pipe->read_end.get(), state, options, result);

  result.wall_ns = ns_since(state.start);
  if (WIFEXITED(state.wait_status)) result.exit_code = WEXITSTATUS(state.wait_status);
  if (WIFSIGNALED(state.wait_status)) result.term_signal = WTERMSIG(state.wait_status);
  return result;
}

namespace {
std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

Result<Fd> open_log_or_null(const std::string& path) {
  if (!path.empty()) return open_log(path);
  int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return make_error("/dev/null", 0, "cannot open: " + errno_text(errno));
  return Fd(fd);
}
}  // namespace

namespace {

// Starts the watchdog of process group `group`: a forked process that joins the group, blocks
// reading a pipe whose only write end kernlens keeps (`write_fd`, close-on-exec), and kills the
// group at EOF. kernlens closes its end once it has reaped the group's leader (what is left of
// the group dies with the watchdog); when kernlens dies first, even by SIGKILL, the kernel
// closes it. posix_spawn cannot set a parent-death signal, and prctl's would follow the thread
// that spawned, not kernlens. Forked from a process with threads, the child makes only
// async-signal-safe calls. Returns the watchdog's pid, or 0 when none could start.
pid_t start_group_watchdog(pid_t group, int& write_fd) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return 0;
  const pid_t pid = ::fork();
  if (pid == 0) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::sigaction(sig, &ignore, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::setpgid(0, group);
    const int read_fd = ends[0];
    // Nothing else stays open: a pipe kernlens's caller reads to its end must not wait for us.
    if (read_fd > 0) ::close_range(0, static_cast<unsigned>(read_fd) - 1, 0);
    ::close_range(static_cast<unsigned>(read_fd) + 1, ~0U, 0);
    char byte;
    while (true) {
      const ssize_t n = ::read(read_fd, &byte, 1);
      if (n == 0 || (n < 0 && errno != EINTR)) break;
    }
    ::kill(-group, SIGKILL);
    ::_exit(0);
  }
  ::close(ends[0]);
  if (pid < 0) {
    ::close(ends[1]);
    return 0;
  }
  ::setpgid(pid, group);  // as the child does: whichever runs first
  write_fd = ends[1];
  return pid;
}

}  // namespace

void BackgroundProcess::release_watchdog() {
  if (watchdog_fd_ >= 0) ::close(watchdog_fd_);
  watchdog_fd_ = -1;
  if (watchdog_pid_ > 0) {
    while (::waitpid(watchdog_pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  watchdog_pid_ = 0;
}

Result<BackgroundProcess> BackgroundProcess::start(const ProcessOptions& options) {
  auto path = program_path(options);
  if (!path) return path.error();  // before a log file is made
  auto out = open_log_or_null(options.stdout_log_path);
  if (!out) return out.error();
  auto err = open_log_or_null(options.stderr_log_path);
  if (!err) return err.error();
  return spawn(*path, options, out->get(), err->get());
}

Result<BackgroundProcess> BackgroundProcess::start(const ProcessOptions& options, int stdout_fd, int stderr_fd) {
  auto path = program_path(options);
  if (!path) return path.error();
  return spawn(*path, options, stdout_fd, stderr_fd);
}

Result<BackgroundProcess> BackgroundProcess::spawn(const std::string& path, const ProcessOptions& options,
                                                   int stdout_fd, int stderr_fd) {
  BackgroundProcess p;
  p.started_ns_ = steady_now_ns();
  auto pid = spawn_in_new_group(path, options.argv, options.env, stdout_fd, stderr_fd);
  if (!pid) return pid.error();
  p.pid_ = *pid;
  p.reaped_ = false;
  p.watchdog_pid_ = start_group_watchdog(*pid, p.watchdog_fd_);
  p.result_.pid = *pid;
  p.result_.stdout_log_path = options.stdout_log_path;
  p.result_.stderr_log_path = options.stderr_log_path;
  return p;
}

BackgroundProcess::BackgroundProcess(BackgroundProcess&& other) noexcept { *this = std::move(other); }

BackgroundProcess& BackgroundProcess::operator=(BackgroundProcess&& other) noexcept {
  if (this == &other) return *this;
  kill_group();
  pid_ = other.pid_;
  reaped_ = other.reaped_;
  wait_status_ = other.wait_status_;
  started_ns_ = other.started_ns_;
  watchdog_pid_ = std::exchange(other.watchdog_pid_, 0);
  watchdog_fd_ = std::exchange(other.watchdog_fd_, -1);
  result_ = std::move(other.result_);
  other.reaped_ = true;  // the moved-from object owns nothing
  return *this;
}

BackgroundProcess::~BackgroundProcess() { kill_group(); }

// Reaps the child when it exited (or waits for it, `block`); true once reaped.
bool BackgroundProcess::reap(bool block) {
  if (reaped_) return true;
  pid_t r;
  do {
    r = ::waitpid(pid_, &wait_status_, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    reaped_ = true;
    result_.wall_ns = steady_now_ns() - started_ns_;
    if (r == pid_ && WIFEXITED(wait_status_)) result_.exit_code = WEXITSTATUS(wait_status_);
    if (r == pid_ && WIFSIGNALED(wait_status_)) result_.term_signal = WTERMSIG(wait_status_);
    release_watchdog();
  }
  return reaped_;
}

bool BackgroundProcess::running() { return !reap(false); }

ProcessResult BackgroundProcess::wait(std::int64_t timeout_ns, std::int64_t kill_grace_ns) {
  return wait_until(timeout_ns, kill_grace_ns, &ProcessResult::timed_out);
}

ProcessResult BackgroundProcess::stop_after(std::int64_t after_ns, std::int64_t kill_grace_ns) {
  return wait_until(after_ns, kill_grace_ns, &ProcessResult::stopped);
}

ProcessResult BackgroundProcess::wait_until(std::int64_t timeout_ns, std::int64_t kill_grace_ns,
                                            bool ProcessResult::*ended) {
  const std::int64_t deadline = timeout_ns > 0 ? steady_now_ns() + timeout_ns : 0;
  std::int64_t kill_at = 0;
  while (!reap(false)) {
    const std::int64_t now = steady_now_ns();
    if (deadline && now >= deadline && !(result_.*ended)) {
      result_.*ended = true;
      ::kill(-pid_, SIGTERM);
      result_.signals_sent.push_back(SIGTERM);
      kill_at = now + kill_grace_ns;
    }
    if (kill_at && now >= kill_at && !result_.killed) {
      result_.killed = true;
      ::kill(-pid_, SIGKILL);
      result_.signals_sent.push_back(SIGKILL);
    }
    ::usleep(10'000);
  }
  return result_;
}

void BackgroundProcess::kill_group() {
  if (reaped_) return;
  ::kill(-pid_, SIGKILL);
  result_.killed = true;
  result_.signals_sent.push_back(SIGKILL);
  reap(true);
}

Result<CapturedOutput> run_and_capture(const std::vector<std::string>& argv,
                                       std::int64_t timeout_ns) {
  CapturedOutput captured;
  ProcessOptions options;
  options.argv = argv;
  options.timeout_ns = timeout_ns;
  options.kill_grace_ns = 1'000'000'000;
  options.on_line = [&captured](OutputStream stream, std::string_view line) {
    std::string& text =
        stream == OutputStream::kStdout ? captured.stdout_text : captured.stderr_text;
    text.append(line);
    text.push_back('\n');
  };
  auto result = run_process(options);
  if (!result) return result.error();
  captured.result = std::move(*result);
  return captured;
}

}  // namespace kernlens::profile

namespace kernlens::profile {

namespace {
// A probe prints a few kilobytes (ncu --list-sections about 4 KB); more is not read.
constexpr std::size_t kCaptureBytesRead = 16u << 20;
constexpr std::int64_t kCaptureKillGraceNs = 1'000'000'000;

// An anonymous file in memory: no name, so nothing to remove, whatever way kernlens ends.
Result<int> make_memory_file(const char* name) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return make_error("", 0, std::string("cannot make an in-memory file for a probe's output: ") + errno_text(errno));
  return fd;
}

// What a child wrote to `fd`, from its start: the child moved the shared offset to its end.
std::string read_from_start(int fd, std::size_t max_bytes) {
  if (::lseek(fd, 0, SEEK_SET) != 0) return {};
  auto text = read_descriptor_head(fd, "a probe's output", max_bytes);
  return text ? std::move(*text) : std::string();
}
}  // namespace

Result<PendingCapture> PendingCapture::start(const std::vector<std::string>& argv, std::int64_t timeout_ns) {
  PendingCapture capture;
  auto out = make_memory_file("kernlens-capture-stdout");
  if (!out) return out.error();
  capture.stdout_fd_ = *out;
  auto err = make_memory_file("kernlens-capture-stderr");
  if (!err) return err.error();  // the first file goes with `capture`
  capture.stderr_fd_ = *err;
  capture.deadline_ns_ = steady_now_ns() + timeout_ns;
  ProcessOptions options;
  options.argv = argv;
  auto process = BackgroundProcess::start(options, capture.stdout_fd_, capture.stderr_fd_);
  if (!process) return process.error();
  capture.process_.emplace(std::move(*process));
  return capture;
}

PendingCapture::PendingCapture(PendingCapture&& other) noexcept { *this = std::move(other); }

PendingCapture& PendingCapture::operator=(PendingCapture&& other) noexcept {
  if (this == &other) return *this;
  process_.reset();
  close_files();
  process_ = std::move(other.process_);
  other.process_.reset();
  stdout_fd_ = std::exchange(other.stdout_fd_, -1);
  stderr_fd_ = std::exchange(other.stderr_fd_, -1);
  deadline_ns_ = other.deadline_ns_;
  return *this;
}

PendingCapture::~PendingCapture() {
  process_.reset();  // kills a child still running
  close_files();
}

void PendingCapture::close_files() {
  for (int* fd : {&stdout_fd_, &stderr_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

Result<CapturedOutput> PendingCapture::finish() {
  if (!process_) return make_error("", 0, "internal: a capture read twice");
  CapturedOutput captured;
  captured.result = process_->wait(std::max<std::int64_t>(1, deadline_ns_ - steady_now_ns()), kCaptureKillGraceNs);
  process_.reset();
  captured.stdout_text = read_from_start(stdout_fd_, kCaptureBytesRead);
  captured.stderr_text = read_from_start(stderr_fd_, kCaptureBytesRead);
  close_files();
  return captured;
}

Result<CapturedOutput> finish_capture(Result<PendingCapture>& pending) {
  if (!pending) return pending.error();
  return pending->finish();
}

}  // namespace kernlens::profile
