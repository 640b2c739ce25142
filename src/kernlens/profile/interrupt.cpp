#include "kernlens/profile/interrupt.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <string_view>
#include <vector>

#include "kernlens/common/exit_codes.h"
#include "kernlens/common/file.h"

namespace kernlens::profile {
namespace {

struct LastWords {
  std::string path, temporary, bytes;
};

volatile sig_atomic_t g_signal_count = 0;
volatile sig_atomic_t g_first_signal = 0;
// Published whole by the main thread, read by the handler (on whichever thread the signal
// lands): an earlier version stays alive until the guard ends, so a handler never reads freed
// memory.
std::atomic<const LastWords*> g_last_words{nullptr};
std::vector<std::unique_ptr<LastWords>> g_kept_words;
volatile sig_atomic_t g_groups_to_end[InterruptGuard::kMaxGroupsToEnd] = {};

// Only async-signal-safe calls: kill, open, write, close, rename, _exit.
extern "C" void on_guard_signal(int sig) {
  if (g_first_signal == 0) g_first_signal = sig;
  g_signal_count = g_signal_count + 1;
  if (g_signal_count < 2) return;
  for (const auto group : g_groups_to_end) {
    if (group > 0) ::kill(-static_cast<pid_t>(group), SIGKILL);
  }
  if (const LastWords* words = g_last_words.load()) {
    int fd = ::open(words->temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      write_all_fd(fd, words->bytes);
      ::close(fd);
      ::rename(words->temporary.c_str(), words->path.c_str());
    }
  }
  write_all_fd(STDERR_FILENO, "\nkernlens: interrupted twice: stopped at once (the manifest says interrupted)\n");
  ::_exit(kExitToolFailed);
}

struct sigaction g_previous_int {};
struct sigaction g_previous_term {};
struct sigaction g_previous_hup {};

}  // namespace

InterruptGuard::InterruptGuard() {
  g_signal_count = 0;
  g_first_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_guard_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
  sigaction(SIGHUP, &action, &g_previous_hup);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
  sigaction(SIGHUP, &g_previous_hup, nullptr);
  g_last_words = nullptr;
  g_kept_words.clear();
  for (auto& group : g_groups_to_end) group = 0;
}

bool InterruptGuard::interrupted() const { return g_first_signal != 0; }

int InterruptGuard::signal() const { return g_first_signal; }

void InterruptGuard::prepare_last_words(const std::string& path, const std::string& bytes) const {
  auto words = std::make_unique<LastWords>(LastWords{path, path + ".kernlens-interrupted", bytes});
  g_last_words = words.get();
  g_kept_words.push_back(std::move(words));
}

void InterruptGuard::end_group_when_interrupted_twice(int process_group) const {
  if (process_group <= 0) return;
  for (auto& group : g_groups_to_end) {
    if (group == 0) {
      group = process_group;
      return;
    }
  }
}

void InterruptGuard::forget_group(int process_group) const {
  for (auto& group : g_groups_to_end) {
    if (group == process_group) group = 0;
  }
}

std::string signal_name(int sig) {
  if (sig == SIGINT) return "SIGINT";
  if (sig == SIGTERM) return "SIGTERM";
  if (sig == SIGHUP) return "SIGHUP";
  if (sig == SIGKILL) return "SIGKILL";
  return "signal " + std::to_string(sig);
}

}  // namespace kernlens::profile
