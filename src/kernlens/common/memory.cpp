#include "kernlens/common/memory.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <future>
#include <mutex>
#include <utility>
#include <vector>

#include "kernlens/common/parallel_chunks.h"
#include "kernlens/common/step_times.h"

namespace kernlens {

void advise_huge_pages(void* data, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

namespace {

constexpr std::uintptr_t kPage = 4096, kHuge = std::uintptr_t{2} << 20, kLeastPartBytes = std::uintptr_t{1} << 20;

// The whole pages of [data, data + bytes): none is shared with what lies around the range.
std::pair<std::uintptr_t, std::uintptr_t> whole_pages(void* data, std::size_t bytes) {
  const auto start = reinterpret_cast<std::uintptr_t>(data);
  return {(start + kPage - 1) & ~(kPage - 1), (start + bytes) & ~(kPage - 1)};
}

// Faults in the pages of [from, to), whole pages, by writing a zero byte into each: the memory
// holds nothing yet. Written, not populated (MADV_POPULATE_WRITE): on the GPU machine 88 MB
// populated on 1, 4 and 16 threads took 17.5, 4.2 and 13.9 ms (past 4 threads they wait on
// each other in the kernel), written 16.4, 4.6 and 1.8 ms.
void touch_pages(std::uintptr_t from, std::uintptr_t to) {
  for (std::uintptr_t page = from; page < to; page += kPage) *reinterpret_cast<volatile char*>(page) = 0;
}

}  // namespace

void prefault_in_parallel(void* data, std::size_t bytes, unsigned threads) {
  const auto pages = whole_pages(data, bytes);
  const std::uintptr_t begin = pages.first, end = pages.second;  // captured below: no binding (clang 14)
  if (end <= begin) return;
  // Parts of a megabyte at least: a per-launch table of a million launches (4 MB, not aligned
  // to huge pages) took 2.0 ms on one thread of the GPU machine, 0.75 ms on four. Cut on
  // huge-page boundaries where each part holds two or more, so that no huge page is faulted by
  // two threads; on page boundaries below that.
  const std::size_t parts = std::clamp<std::size_t>((end - begin) / kLeastPartBytes, 1, std::max(1u, threads));
  const std::uintptr_t align = (end - begin) / parts >= 2 * kHuge ? kHuge : kPage;
  run_parallel(parts, [&](std::size_t i) {
    auto cut = [&](std::size_t k) {
      return k == 0 ? begin : k == parts ? end : std::min(end, (begin + (end - begin) * k / parts) & ~(align - 1));
    };
    touch_pages(std::max(begin, cut(i)), cut(i + 1));
  });
}

// The range's whole pages in stretches: one huge page each, cut on huge-page boundaries (no
// huge page faulted by two threads), where the range holds two or more; else one stretch.
struct PrefaultInOrder::State {
  std::uintptr_t origin = 0;       // the range's first byte
  std::vector<std::uintptr_t> cuts;  // stretch k is [cuts[k], cuts[k + 1])
  std::unique_ptr<std::atomic<bool>[]> faulted;  // by stretch
  std::atomic<std::size_t> next{0};
  std::mutex mutex;                  // advances done
  std::atomic<std::size_t> done{0};  // stretches [0, done) faulted in

  std::size_t stretches() const { return cuts.empty() ? 0 : cuts.size() - 1; }
  void run(unsigned threads) {
    run_parallel(std::clamp<std::size_t>(threads, 1, stretches()), [&](std::size_t) {
      for (std::size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < stretches();) {
        touch_pages(cuts[k], cuts[k + 1]);
        faulted[k].store(true, std::memory_order_release);
        std::lock_guard lock(mutex);
        std::size_t d = done.load(std::memory_order_relaxed);
        while (d < stretches() && faulted[d].load(std::memory_order_acquire)) ++d;
        done.store(d, std::memory_order_release);
        done.notify_all();
      }
    });
  }
};

PrefaultInOrder::PrefaultInOrder(void* data, std::size_t bytes, unsigned threads, CpuTally* cpu) : state_(std::make_unique<State>()) {
  const auto [begin, end] = whole_pages(data, bytes);
  State& s = *state_;
  s.origin = reinterpret_cast<std::uintptr_t>(data);
  if (end <= begin) return;
  s.cuts.push_back(begin);
  if (end - begin >= 2 * kHuge) {
    for (std::uintptr_t at = (begin + kHuge) & ~(kHuge - 1); at < end; at += kHuge) s.cuts.push_back(at);
  }
  s.cuts.push_back(end);
  s.faulted = std::make_unique<std::atomic<bool>[]>(s.stretches());
  ended_ = std::async(std::launch::async, [&s, threads, cpu] {
    const CpuTally::Charge charge(cpu);  // run_parallel's threads with it
    s.run(threads);
  });
}

PrefaultInOrder::~PrefaultInOrder() { wait(); }

void PrefaultInOrder::wait_until(std::size_t bytes) const {
  const State& s = *state_;
  // The stretches that begin before data + bytes.
  const std::uintptr_t to = s.origin + bytes;
  const auto needed = static_cast<std::size_t>(std::lower_bound(s.cuts.begin(), s.cuts.end(), to) - s.cuts.begin());
  const std::size_t stretches = std::min(needed, s.stretches());
  for (std::size_t d; (d = s.done.load(std::memory_order_acquire)) < stretches;) s.done.wait(d, std::memory_order_acquire);
}

void PrefaultInOrder::wait() const {
  if (ended_.valid()) ended_.wait();
}

void return_large_blocks_when_freed() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

}  // namespace kernlens
