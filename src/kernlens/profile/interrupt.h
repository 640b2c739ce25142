// Ctrl-C while kernlens itself works, between two profiler runs (reading an export, joining,
// analyzing): run_process() handles a signal that arrives while a child runs (process.h); this
// guard handles the rest of a `kernlens profile` run. The first SIGINT, SIGTERM or SIGHUP (the
// terminal closed: by default it would end kernlens with the manifest saying "running") is recorded
// and the run stops at its next step, the manifest saying "interrupted"; a second one writes the
// manifest prepared for that case and ends kernlens at once (exit code 3), so that even a step
// that takes long ends with an honest manifest.
#pragma once

#include <string>

namespace kernlens::profile {

class InterruptGuard {
 public:
  InterruptGuard();   // installs the handlers (one guard at a time)
  ~InterruptGuard();  // restores the previous ones
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // Whether a signal came since the guard was installed, and the first one (0: none).
  bool interrupted() const;
  int signal() const;

  // What a second signal writes before exiting: `bytes` to `path`, through a temporary file
  // beside it renamed over it. Each call replaces the previous one.
  void prepare_last_words(const std::string& path, const std::string& bytes) const;
  // Process groups that a second signal kills on its way out (children left running in the
  // background: early_start.h), at most kMaxGroupsToEnd at once; forget_group() takes one back.
  static constexpr int kMaxGroupsToEnd = 4;
  void end_group_when_interrupted_twice(int process_group) const;
  void forget_group(int process_group) const;
};

// "SIGINT", "SIGTERM", or "signal N".
std::string signal_name(int sig);

}  // namespace kernlens::profile
