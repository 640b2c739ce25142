// Where a command's time went, step by step (`analyze --verbose`): each step's name, wall
// time, nesting depth and the process's peak memory when it ended, in the order the steps
// started.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kernlens {

class StepTimes {
 public:
  struct Step {
    std::string name;
    std::int64_t wall_ns = 0;
    int depth = 0;  // steps inside another are one deeper
    // The CPU time of the whole process while the step ran (all its threads, the step's and any
    // beside it), -1 for a step timed elsewhere (add): against the wall time, how many CPUs the
    // step kept busy, and against a one-thread run, what its threads cost beyond the work.
    std::int64_t cpu_ns = -1;
    // The process's peak resident memory so far when the step ended (getrusage), 0 where the
    // system does not say: where the peak rises is the step that holds the most.
    std::int64_t peak_rss_bytes = 0;
  };

  // Runs f() as the step `name`; its wall and CPU times are from the call to f's return.
  template <class F>
  decltype(auto) time(std::string name, F&& f) {
    const Scope scope(*this, std::move(name));
    return std::forward<F>(f)();
  }

  // Records a step timed elsewhere (work done on another thread, beside the step now open),
  // inside the step now open.
  void add(std::string name, std::int64_t wall_ns);

  const std::vector<Step>& steps() const { return steps_; }
  // One line a step, indented by depth, the times aligned, and the peak so far where it is
  // known: "  read in.sqlite   0.812 s  cpu   9.120 s   peak 104.4 MiB".
  std::string text() const;

 private:
  using Clock = std::chrono::steady_clock;
  class Scope {
   public:
    Scope(StepTimes& times, std::string name);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    StepTimes& times_;
    std::size_t index_;
    Clock::time_point start_;
    std::int64_t start_cpu_ns_;
  };

  std::vector<Step> steps_;
  int depth_ = 0;
};

// A step's name with the parts it was cut into, one a thread: "kernel rows, 64 parts".
inline std::string in_parts(const std::string& step, std::size_t parts) {
  return parts > 1 ? step + ", " + std::to_string(parts) + " parts" : step;
}

// The wall time f() takes, in ns: for work on another thread, recorded with StepTimes::add.
template <class F>
std::int64_t wall_ns_of(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  std::forward<F>(f)();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
}

// f() timed as `name` into `times`, or only run when there is none (no --verbose).
template <class F>
decltype(auto) timed_step(StepTimes* times, std::string name, F&& f) {
  if (!times) return std::forward<F>(f)();
  return times->time(std::move(name), std::forward<F>(f));
}

}  // namespace kernlens
