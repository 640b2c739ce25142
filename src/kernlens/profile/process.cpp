#include "kernlens/profile/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed echo target or full disk must not stop the child's run
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// --- Signal forwarding -------------------------------------------------------------------
// The handler only records the signal and wakes poll() through a self-pipe; the run loop does
// the forwarding, so nothing unsafe happens inside the handler.

volatile sig_atomic_t g_pending_signal = 0;
int g_wake_fd = -1;
std::atomic<bool> g_run_active{false};

extern "C" void on_forwarded_signal(int sig) {
  int saved_errno = errno;
  if (g_pending_signal == 0) g_pending_signal = sig;
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
    g_pending_signal = 0;
    g_wake_fd = wake_fd;
    struct sigaction action {};
    action.sa_handler = on_forwarded_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_int_);
    sigaction(SIGTERM, &action, &previous_term_);
  }
  ~SignalForwarding() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
    g_wake_fd = -1;
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
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
    if (pump.log.get() >= 0) write_all(pump.log.get(), bytes);
    if (pump.echo_fd >= 0) write_all(pump.echo_fd, bytes);
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
  bool reaped = false;
  int wait_status = 0;
  Clock::time_point start;
  std::optional<Clock::time_point> timeout_at;
  std::optional<Clock::time_point> kill_at;      // set once SIGTERM was sent for a timeout
  std::optional<Clock::time_point> drain_until;  // after reaping: how long to wait for EOF
};

void try_reap(RunState& state) {
  if (state.reaped) return;
  pid_t r;
  do {
    r = ::waitpid(state.pid, &state.wait_status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == state.pid || (r < 0 && errno == ECHILD)) state.reaped = true;
}

// Milliseconds poll() may sleep before the next deadline; -1 when there is none.
int poll_timeout_ms(const RunState& state, bool pipes_open) {
  std::optional<Clock::time_point> next;
  auto consider = [&](const std::optional<Clock::time_point>& t) {
    if (t && (!next || *t < *next)) next = t;
  };
  consider(state.kill_at ? state.kill_at : state.timeout_at);
  consider(state.drain_until);
  // With both pipes closed nothing wakes us when the child exits, so look every 10 ms.
  int cap_ms = pipes_open ? -1 : 10;
  if (!next) return cap_ms;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*next - Clock::now()).count();
  int left_ms = static_cast<int>(std::max<std::int64_t>(0, left + 1));
  return cap_ms < 0 ? left_ms : std::min(left_ms, cap_ms);
}

void check_deadlines(RunState& state, const ProcessOptions& options, ProcessResult& result) {
  auto now = Clock::now();
  if (state.reaped) return;
  if (state.timeout_at && !state.kill_at && now >= *state.timeout_at) {
    result.timed_out = true;
    ::kill(-state.pid, SIGTERM);
    state.kill_at = now + std::chrono::nanoseconds(options.kill_grace_ns);
  } else if (state.kill_at && !result.killed && now >= *state.kill_at) {
    result.killed = true;
    ::kill(-state.pid, SIGKILL);
  }
}

void forward_pending_signal(int wake_fd, RunState& state, ProcessResult& result) {
  char drain[64];
  while (::read(wake_fd, drain, sizeof drain) > 0) {
  }
  int sig = g_pending_signal;
  if (sig == 0) return;
  g_pending_signal = 0;
  if (!result.interrupted) result.interrupt_signal = sig;
  result.interrupted = true;
  if (!state.reaped) ::kill(-state.pid, sig);
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
  if (interrupted) {
    text += std::string(", interrupted by ") + (interrupt_signal == SIGTERM ? "SIGTERM" : "SIGINT");
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

Result<ProcessResult> run_process(const ProcessOptions& options) {
  if (options.argv.empty()) return make_error("", 0, "cannot run an empty command");
  auto path = find_executable(options.argv[0]);
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
    bool pipes_open = pumps[0].open() || pumps[1].open();
    if (state.reaped && !pipes_open) break;
    // A grandchild outside our reach may hold the pipes open after the child exits: give it a
    // moment to finish writing, then stop.
    if (state.reaped && !state.drain_until)
      state.drain_until = Clock::now() + std::chrono::seconds(2);
    if (state.drain_until && Clock::now() >= *state.drain_until) break;

    pollfd fds[3];
    nfds_t count = 0;
    fds[count++] = {wake_pipe->read_end.get(), POLLIN, 0};
    for (StreamPump& pump : pumps) {
      if (pump.open()) fds[count++] = {pump.pipe.get(), POLLIN, 0};
    }
    int ready = ::poll(fds, count, poll_timeout_ms(state, pipes_open));
    if (ready < 0 && errno != EINTR) break;
    forward_pending_signal(wake_pipe->read_end.get(), state, result);
    for (StreamPump& pump : pumps) {
      if (pump.open()) pump_once(pump, options.on_line);
    }
    try_reap(state);
    check_deadlines(state, options, result);
  }
  // Stopped early (drain limit or poll failure): make sure the child is gone and reaped.
  if (!state.reaped) {
    ::kill(-state.pid, SIGKILL);
    while (::waitpid(state.pid, &state.wait_status, 0) < 0 && errno == EINTR) {
    }
  }
  for (StreamPump& pump : pumps) emit_lines(pump, options.on_line, /*at_eof=*/true);
  forward_pending_signal(wake_pipe->read_end.get(), state, result);

  result.wall_ns = ns_since(state.start);
  if (WIFEXITED(state.wait_status)) result.exit_code = WEXITSTATUS(state.wait_status);
  if (WIFSIGNALED(state.wait_status)) result.term_signal = WTERMSIG(state.wait_status);
  return result;
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
