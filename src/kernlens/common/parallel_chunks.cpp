#include "kernlens/common/parallel_chunks.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <latch>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "kernlens/common/bits.h"
#include "kernlens/common/step_times.h"

namespace kernlens {
namespace {

std::atomic<unsigned> g_default_threads{0};

// The threads of run_parallel and run_side_by_side, kept parked between calls: creating and
// joining 15 threads took 340 us on the GPU machine (22 us a thread), and a million-kernel
// export's read and analysis ran 21 such rounds. A task goes to a parked thread where there
// is one, else to a new one that parks when done: no call waits for a thread that another
// call holds (calls nest and run side by side), and there are as many threads as ever ran at
// once. Leaked on purpose: a parked thread may outlive static destruction at exit.
class ParkedThreads {
 public:
  static ParkedThreads& get() {
    static ParkedThreads* const threads = new ParkedThreads;
    return *threads;
  }

  void run(std::function<void()> task) {
    Thread* t = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (!parked_.empty()) {
        t = parked_.back();
        parked_.pop_back();
      }
    }
    if (!t) {
      t = new Thread;
      t->task = std::move(task);
      std::thread(&ParkedThreads::loop, this, t).detach();
      return;
    }
    {
      std::lock_guard lock(t->mutex);
      t->task = std::move(task);
    }
    t->wake.notify_one();
  }

 private:
  struct Thread {
    std::mutex mutex;
    std::condition_variable wake;
    std::function<void()> task;  // set while it has one
  };

  ParkedThreads() {
    // A forked child has none of these threads: it starts new ones.
    pthread_atfork([] { get().mutex_.lock(); }, [] { get().mutex_.unlock(); },
                   [] {
                     get().parked_.clear();  // their Thread records leak with the parent's threads
                     get().mutex_.unlock();
                   });
  }

  void loop(Thread* t) {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(t->mutex);
        t->wake.wait(lock, [&] { return static_cast<bool>(t->task); });
        task = std::exchange(t->task, nullptr);
      }
      task();
      task = nullptr;  // what it holds goes now, not at the next task
      std::lock_guard lock(mutex_);
      parked_.push_back(t);
    }
  }

  std::mutex mutex_;
  std::vector<Thread*> parked_;
};

}  // namespace

unsigned usable_cpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) return std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::max(1, CPU_COUNT(&cpus)));
}

unsigned default_threads() {
  const unsigned set = g_default_threads.load(std::memory_order_relaxed);
  return set ? set : usable_cpus();
}

void set_default_threads(unsigned threads) { g_default_threads.store(threads, std::memory_order_relaxed); }

void run_parallel(std::size_t n, const std::function<void(std::size_t)>& work) {
  if (n == 0) return;
  std::latch done(static_cast<std::ptrdiff_t>(n - 1));
  // The other threads' CPU goes where this thread's goes (--verbose's tallies): work done
  // beside a step counts whole, however many threads it spreads over.
  CpuTally* const tally = CpuTally::open_on_this_thread();
  for (std::size_t i = 1; i < n; ++i) {
    ParkedThreads::get().run([&work, &done, i, tally] {
      {
        const CpuTally::Charge charge(tally);
        work(i);
      }  // charged before the caller can read the tally
      done.count_down();
    });
  }
  work(0);
  done.wait();
}

void run_in_chunks(std::size_t items, std::size_t chunks,
                   const std::function<void(std::size_t, std::size_t, std::size_t)>& work) {
  run_in_chunks_on(items, chunks, chunks, work);
}

void run_in_chunks_on(std::size_t items, std::size_t chunks, std::size_t threads,
                      const std::function<void(std::size_t, std::size_t, std::size_t)>& work) {
  if (chunks == 0) return;
  std::atomic<std::size_t> next{0};
  run_parallel(std::clamp<std::size_t>(threads, 1, chunks), [&](std::size_t) {
    for (std::size_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
      work(c, items * c / chunks, items * (c + 1) / chunks);
    }
  });
}

std::size_t stretches_for_threads(std::size_t items, std::size_t least, unsigned threads) {
  constexpr std::size_t kStretchesPerThread = 4;
  if (threads < 2) return 1;
  return std::clamp<std::size_t>(items / std::max<std::size_t>(1, least), 1, kStretchesPerThread * threads);
}

void run_side_by_side(const std::function<void()>& first, const std::function<void()>& second) {
  if (default_threads() < 2) {
    first();
    second();
    return;
  }
  run_parallel(2, [&](std::size_t i) { i == 0 ? first() : second(); });
}

std::size_t run_ordered_parts(unsigned threads, std::size_t slots,
                              const std::function<bool(std::size_t, std::size_t)>& has_part,
                              const std::function<void(std::size_t, std::size_t)>& parse,
                              const std::function<bool(std::size_t, std::size_t)>& merge,
                              const std::function<void(std::size_t)>& join) {
  slots = std::max<std::size_t>(1, slots);
  std::mutex mutex;
  std::condition_variable slot_freed;
  std::vector<char> parsed(slots, 0);  // by slot: its part is parsed, not yet merged
  std::size_t next_parse = 0, next_merge = 0;
  bool merging = false, stopped = false, no_more = false;
  // Every thread runs this loop: merge what is ready when no other thread is merging, else
  // parse the next part when its slot is free, else wait for a merge to free one. A merge
  // wakes one waiting thread, for the one slot it freed: waking them all (a thousand merges of
  // a 1 GB raw page, 15 threads each) made 14,000 context switches a read at 16 threads. A
  // thread that leaves wakes them all, to leave too or to take what is left.
  auto work = [&](std::size_t thread) {
    if (join) join(thread);
    std::unique_lock lock(mutex);
    while (true) {
      if (!merging && !stopped && next_merge < next_parse && parsed[next_merge % slots]) {
        merging = true;
        while (!stopped && next_merge < next_parse && parsed[next_merge % slots]) {
          const std::size_t i = next_merge;
          lock.unlock();
          const bool go_on = merge(i, i % slots);
          lock.lock();
          parsed[i % slots] = 0;
          ++next_merge;
          stopped = !go_on;
          slot_freed.notify_one();
        }
        merging = false;
        continue;
      }
      // The parts not yet merged are being parsed, and whoever finishes one merges it.
      if (stopped || no_more) {
        slot_freed.notify_all();
        return;
      }
      if (next_parse - next_merge == slots) {
        slot_freed.wait(lock);
        continue;
      }
      if (!has_part(next_parse, next_parse % slots)) {
        no_more = true;
        slot_freed.notify_all();
        return;
      }
      const std::size_t i = next_parse++;
      lock.unlock();
      parse(i, i % slots);
      lock.lock();
      parsed[i % slots] = 1;
    }
  };
  run_parallel(std::max(1u, threads), work);
  return next_merge;
}

namespace {

// The k-th cut of cut_records, the one before it at `from`; nullopt when there is none.
template <class AfterBreak>
std::optional<std::size_t> next_cut(std::string_view text, std::size_t k, std::size_t from, std::size_t min_bytes,
                                    std::size_t target, const AfterBreak& after_break) {
  const std::size_t at = std::max(from + min_bytes, k * target);
  if (at + min_bytes > text.size()) return std::nullopt;
  const std::size_t cut = after_break(at);
  if (cut == std::string_view::npos || cut + min_bytes > text.size()) return std::nullopt;
  return cut;
}

std::size_t after_line_break(std::string_view text, std::size_t at) {
  const std::size_t line_break = text.find('\n', at);
  return line_break == std::string_view::npos ? line_break : line_break + 1;
}

// Cuts `text` into up to `parts` parts of about equal size, none smaller than `min_bytes`:
// each cut is what after_break(k x size / parts) says, the offset just after a record's line
// break at or after that point (npos where there is none).
template <class AfterBreak>
std::vector<std::size_t> cut_records(std::string_view text, std::size_t parts, std::size_t min_bytes,
                                     std::size_t target, const AfterBreak& after_break) {
  std::vector<std::size_t> starts;
  std::size_t from = 0;  // a record boundary
  for (std::size_t k = 1; k < parts; ++k) {
    const auto cut = next_cut(text, k, from, min_bytes, target, after_break);
    if (!cut) break;
    starts.push_back(from = *cut);
  }
  return starts;
}

bool too_small_to_split(std::string_view text, std::size_t parts, std::size_t min_bytes) {
  return parts < 2 || text.size() < 2 * min_bytes;
}

}  // namespace

std::vector<std::size_t> split_csv_records(std::string_view text, std::size_t parts, std::size_t min_bytes) {
  if (too_small_to_split(text, parts, min_bytes)) return {};
  const std::size_t target = std::max(min_bytes, text.size() / parts);
  // The quotes of each stretch [k x target, (k + 1) x target), counted on a thread each: one
  // thread counting the whole text before the cuts was a tenth of reading 1 GB on 16 threads.
  std::vector<std::size_t> quotes((text.size() + target - 1) / target);
  run_parallel(quotes.size(), [&](std::size_t k) {
    const std::size_t begin = k * target;
    quotes[k] = count_byte(text.data() + begin, std::min(target, text.size() - begin), '"');
  });
  auto inside_quotes_at = [&](std::size_t at) {
    std::size_t n = count_byte(text.data() + at / target * target, at % target, '"');
    for (std::size_t k = 0; k < at / target; ++k) n += quotes[k];
    return n % 2 == 1;
  };
  return cut_records(text, parts, min_bytes, target, [&](std::size_t cut) {
    bool inside = inside_quotes_at(cut);
    while (cut < text.size()) {
      const char c = text[cut++];
      if (c == '"') inside = !inside;
      if (c == '\n' && !inside) return cut;
    }
    return std::string_view::npos;
  });
}

std::vector<std::size_t> guess_csv_record_cuts(std::string_view text, std::size_t parts, std::size_t min_bytes) {
  std::vector<std::size_t> cuts;
  GuessedCsvRecordCuts guessed(text, parts, min_bytes);
  while (auto cut = guessed.next()) cuts.push_back(*cut);
  return cuts;
}

GuessedCsvRecordCuts::GuessedCsvRecordCuts(std::string_view text, std::size_t parts, std::size_t min_bytes)
    : text_(text), parts_(too_small_to_split(text, parts, min_bytes) ? 1 : parts), min_bytes_(min_bytes),
      target_(std::max(min_bytes, text.size() / std::max<std::size_t>(parts, 1))) {}

std::optional<std::size_t> GuessedCsvRecordCuts::next() {
  if (k_ >= parts_) return std::nullopt;
  auto cut = next_cut(text_, k_, from_, min_bytes_, target_, [&](std::size_t at) { return after_line_break(text_, at); });
  if (!cut) {
    k_ = parts_;
    return std::nullopt;
  }
  ++k_;
  return from_ = *cut;
}

}  // namespace kernlens
