// Where a command's time went, step by step (`analyze --verbose`): each step's name, wall
// time, nesting depth and the process's peak memory when it ended, in the order the steps
// started; and what work done beside a step cost on the threads that did it (CpuTally).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kernlens {

// The CPU time of the calling thread so far (CLOCK_THREAD_CPUTIME_ID), ns; -1 where the system
// does not say.
std::int64_t thread_cpu_ns();

// What one kind of work done beside a step (on threads of its own, or in turns on threads it
// shares) cost on the threads that did it: their CPU time while they did it, and the wall time
// from its first charge's start to its last one's end. The process's CPU in the step it ran
// beside holds it with everything else; this tells it apart (how a run on many threads spent
// its CPU, work by work). A thread charges its work with a Charge, a few times a task, never a
// row; a Charge inside another on the same thread takes its time from the outer one, so that
// nested work is counted once, to the innermost. Work a charged thread hands to run_parallel
// (run_side_by_side, run_in_chunks...) is charged to the same tally on the threads that take it.
class CpuTally {
 public:
  class Charge {
   public:
    explicit Charge(CpuTally* tally);  // none (null): charges nothing
    ~Charge();
    Charge(const Charge&) = delete;
    Charge& operator=(const Charge&) = delete;

   private:
    friend class CpuTally;
    void settle(std::int64_t now_ns);  // the time since since_ns_ to the tally

    CpuTally* tally_;
    Charge* outer_ = nullptr;  // the Charge open on this thread before this one, or null
    std::int64_t since_ns_ = 0;
  };

  // The tally the calling thread's CPU goes to now (its innermost open Charge's), or null:
  // run_parallel charges the threads it hands work to there too.
  static CpuTally* open_on_this_thread();

  std::int64_t cpu_ns() const { return cpu_ns_.load(std::memory_order_relaxed); }
  // 0 when nothing was charged.
  std::int64_t wall_ns() const;
  bool charged() const { return first_ns_.load(std::memory_order_relaxed) != kNever; }

 private:
  static constexpr std::int64_t kNever = INT64_MAX;
  std::atomic<std::int64_t> cpu_ns_{0};
  std::atomic<std::int64_t> first_ns_{kNever}, last_ns_{0};  // steady clock
};

class StepTimes {
 public:
  struct Step {
    std::string name;
    std::int64_t wall_ns = 0;
    int depth = 0;  // steps inside another are one deeper
    // The CPU time of the whole process while the step ran (all its threads, the step's and any
    // beside it): against the wall time, how many CPUs the step kept busy, and against a
    // one-thread run, what its threads cost beyond the work. For a step timed elsewhere (add),
    // its own threads' CPU where a CpuTally counted it, else -1.
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
  // The same with the work's own wall and CPU times (a tally of nothing records nothing): its
  // cpu_ns is the CPU of the threads that did it, not the process's.
  void add(std::string name, const CpuTally& tally);

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
