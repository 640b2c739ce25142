// Memory hints for the few very large buffers (a wide raw page's metric pool, per-launch tables).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <future>
#include <iterator>
#include <memory>
#include <vector>

namespace kernlens {

class CpuTally;

// Asks the kernel to back [data, data + bytes) with transparent huge pages where it can:
// 2 MiB pages fault in 512 times less often than 4 KiB ones. A hint; failure is harmless.
void advise_huge_pages(void* data, std::size_t bytes);

// Faults in the pages of [data, data + bytes), memory allocated but not yet written (its whole
// pages get a zero byte), on up to `threads` threads at once: the first writes of a large new
// buffer, one after the other on one thread, otherwise wait for each page to be zeroed (on
// these VMs a million launches' 88 MB took 50-250 ms of a serial step).
void prefault_in_parallel(void* data, std::size_t bytes, unsigned threads);

// prefault_in_parallel begun now, on threads of its own, in stretches taken in address order,
// so that a writer can follow it: wait_until(bytes) returns once the pages of [data, data +
// bytes) are faulted in. The nsys reader's one thread that makes the launches' slots (a
// vector's resize: 640 MB for 8 M kernels, ~55 ms) waited for the whole prefault before it
// began, with the kernel rows' threads waiting on it in turn. The destructor waits for the end.
class PrefaultInOrder {
 public:
  // `cpu`, where set (it must outlive this), is charged with the prefault's CPU (--verbose).
  PrefaultInOrder(void* data, std::size_t bytes, unsigned threads, CpuTally* cpu = nullptr);
  ~PrefaultInOrder();
  PrefaultInOrder(const PrefaultInOrder&) = delete;
  PrefaultInOrder& operator=(const PrefaultInOrder&) = delete;

  void wait_until(std::size_t bytes) const;
  void wait() const;  // every page

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::future<void> ended_;  // after state_: waited for before it goes
};

// Reserves room for `n` elements before the first touch, with huge pages: each 4 KiB page
// fault costs about a microsecond on virtual machines, a quarter of the time for a million
// launches.
template <class T>
void reserve_huge(std::vector<T>& v, std::size_t n) {
  if (n <= v.capacity()) return;
  v.reserve(n);
  advise_huge_pages(v.data() + v.size(), (v.capacity() - v.size()) * sizeof(T));
}

// Resizes `v` to `n` value-initialized elements, its memory reserved with huge pages and the
// room for the new ones faulted in on `threads` threads first (not the elements it has: the
// prefault writes): a per-launch table of a million launches (4 MB) took 15 ms of faults on one
// thread of this VM.
template <class T>
void resize_prefaulted(std::vector<T>& v, std::size_t n, unsigned threads) {
  reserve_huge(v, n);
  if (n > v.size()) prefault_in_parallel(v.data() + v.size(), (n - v.size()) * sizeof(T), threads);
  v.resize(n);
}

// Appends of many parts to one large vector on one thread while others work (a reader's merge
// in order, run_ordered_parts): its pages faulted in ahead of the appends, a stretch at a time
// on `threads` threads, and where it must grow, its new block faulted in before its elements
// move there. Otherwise that thread faults in each page as it writes it, with the others
// waiting for its merge: most of a 1 GB trace's merges on 16 threads, in one 6 ms stretch at 1
// CPU.
template <class T>
class FaultedAppends {
 public:
  static constexpr std::size_t kAheadBytes = std::size_t{2} << 20;  // faulted in beyond the next appends

  FaultedAppends(std::vector<T>& v, unsigned threads) : v_(v), threads_(threads) {}
  // Before appending `more` elements.
  void make_room(std::size_t more) {
    const std::size_t need = v_.size() + more, ahead = need + kAheadBytes / sizeof(T);
    if (need > v_.capacity()) {
      std::vector<T> grown;
      reserve_huge(grown, std::max(need, 2 * v_.capacity()));
      start_on(grown);
      fault_in(grown, std::min(grown.capacity(), ahead));  // before the elements move there
      grown.insert(grown.end(), std::make_move_iterator(v_.begin()), std::make_move_iterator(v_.end()));
      v_.swap(grown);
      return;
    }
    if (v_.data() != data_) start_on(v_);  // reserved elsewhere: faulted in from its elements' end on
    if (address(v_, need) > faulted_) fault_in(v_, std::min(v_.capacity(), ahead));
  }

 private:
  static std::uintptr_t address(const std::vector<T>& v, std::size_t element) {
    return reinterpret_cast<std::uintptr_t>(v.data() + element);
  }
  void start_on(const std::vector<T>& v) {
    data_ = v.data();
    faulted_ = 0;
  }
  // Faults in the pages of `v`'s room up to element `end` not yet faulted in: the whole pages
  // past its elements (the prefault writes a byte a page) from faulted_ on. Each stretch ends
  // at a page boundary, where the next one begins.
  void fault_in(std::vector<T>& v, std::size_t end) {
    constexpr std::uintptr_t kPage = 4096;
    const std::uintptr_t from = std::max(faulted_, (address(v, v.size()) + kPage - 1) & ~(kPage - 1));
    const std::uintptr_t to = address(v, end) & ~(kPage - 1);
    if (to <= from) return;
    prefault_in_parallel(reinterpret_cast<void*>(from), to - from, threads_);
    faulted_ = to;
  }

  std::vector<T>& v_;
  unsigned threads_;
  const T* data_ = nullptr;
  std::uintptr_t faulted_ = 0;  // data_'s room is faulted in up to here
};

// Makes malloc map every block of 128 KiB and more that its arena's free memory cannot hold
// on its own, returned to the system when it is freed (M_MMAP_THRESHOLD fixed: glibc otherwise
// raises the threshold to the size of each large block freed, then grows the arena of the
// thread that allocates, which keeps the memory). A read on many threads frees its parts'
// buffers on threads whose arenas the analysis then does not use: at --threads 16 a
// million-kernel nsys export held ~6 MB more than its file so. For a whole process (the CLI),
// not a library's caller; glibc only.
void return_large_blocks_when_freed();

}  // namespace kernlens
