#include "kernlens/common/step_times.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <ctime>
#include <functional>

namespace kernlens {
namespace {

std::int64_t peak_rss_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux counts KiB
}

// CLOCK_PROCESS_CPUTIME_ID or CLOCK_THREAD_CPUTIME_ID in ns; -1 where the system does not say.
std::int64_t cpu_clock_ns(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return -1;
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t process_cpu_ns() { return cpu_clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// `at` made `value` where `value` comes before it (`before`: std::less for the earliest,
// std::greater for the latest), whatever other threads store meanwhile.
template <class Before>
void keep_first(std::atomic<std::int64_t>& at, std::int64_t value, Before before) {
  for (std::int64_t now = at.load(std::memory_order_relaxed);
       before(value, now) && !at.compare_exchange_weak(now, value, std::memory_order_relaxed);) {
  }
}

// The open Charge of this thread, innermost: the one its CPU time goes to.
thread_local CpuTally::Charge* t_open_charge = nullptr;

}  // namespace

std::int64_t thread_cpu_ns() { return cpu_clock_ns(CLOCK_THREAD_CPUTIME_ID); }

CpuTally::Charge::Charge(CpuTally* tally) : tally_(tally) {
  if (!tally_) return;
  outer_ = t_open_charge;
  since_ns_ = thread_cpu_ns();
  if (outer_) outer_->settle(since_ns_);
  t_open_charge = this;
  keep_first(tally_->first_ns_, steady_ns(), std::less<>());
}

CpuTally::Charge::~Charge() {
  if (!tally_) return;
  const std::int64_t cpu = thread_cpu_ns();
  settle(cpu);
  t_open_charge = outer_;
  if (outer_) outer_->since_ns_ = cpu;
  keep_first(tally_->last_ns_, steady_ns(), std::greater<>());
}

void CpuTally::Charge::settle(std::int64_t now_ns) {
  if (now_ns >= 0 && since_ns_ >= 0) tally_->cpu_ns_.fetch_add(now_ns - since_ns_, std::memory_order_relaxed);
  since_ns_ = now_ns;
}

CpuTally* CpuTally::open_on_this_thread() { return t_open_charge ? t_open_charge->tally_ : nullptr; }

std::int64_t CpuTally::wall_ns() const {
  const std::int64_t first = first_ns_.load(std::memory_order_relaxed), last = last_ns_.load(std::memory_order_relaxed);
  return first == kNever || last < first ? 0 : last - first;
}

StepTimes::Scope::Scope(StepTimes& times, std::string name)
    : times_(times), index_(times.steps_.size()), start_(Clock::now()), start_cpu_ns_(process_cpu_ns()) {
  times_.steps_.push_back(Step{std::move(name), 0, times_.depth_++});
}

StepTimes::Scope::~Scope() {
  times_.steps_[index_].wall_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count();
  times_.steps_[index_].peak_rss_bytes = peak_rss_bytes();
  if (const std::int64_t cpu = process_cpu_ns(); cpu >= 0 && start_cpu_ns_ >= 0) times_.steps_[index_].cpu_ns = cpu - start_cpu_ns_;
  --times_.depth_;
}

void StepTimes::add(std::string name, std::int64_t wall_ns) {
  steps_.push_back(Step{std::move(name), wall_ns, depth_, -1, peak_rss_bytes()});
}

void StepTimes::add(std::string name, const CpuTally& tally) {
  if (tally.charged()) steps_.push_back(Step{std::move(name), tally.wall_ns(), depth_, tally.cpu_ns(), peak_rss_bytes()});
}

std::string StepTimes::text() const {
  std::size_t width = 0;
  for (const Step& s : steps_) width = std::max(width, 2 * static_cast<std::size_t>(s.depth) + s.name.size());
  std::string out;
  for (const Step& s : steps_) {
    const std::string label = std::string(2 * static_cast<std::size_t>(s.depth), ' ') + s.name;
    out += fmt::format("  {:<{}}  {:8.3f} s", label, width, static_cast<double>(s.wall_ns) / 1e9);
    out += s.cpu_ns >= 0 ? fmt::format("  cpu {:8.3f} s", static_cast<double>(s.cpu_ns) / 1e9) : std::string(16, ' ');
    if (s.peak_rss_bytes > 0) out += fmt::format("   peak {:7.1f} MiB", static_cast<double>(s.peak_rss_bytes) / (1 << 20));
    out += '\n';
  }
  return out;
}

}  // namespace kernlens
