// Memory hints for the few very large buffers (a wide raw page's metric pool, per-launch tables).
#pragma once

#include <cstddef>
#include <vector>

namespace kernlens {

// Asks the kernel to back [data, data + bytes) with transparent huge pages where it can:
// 2 MiB pages fault in 512 times less often than 4 KiB ones. A hint; failure is harmless.
void advise_huge_pages(void* data, std::size_t bytes);

// Faults in the pages of [data, data + bytes), memory allocated but not yet written (its whole
// pages get a zero byte), on up to `threads` threads at once: the first writes of a large new
// buffer, one after the other on one thread, otherwise wait for each page to be zeroed (on
// these VMs a million launches' 88 MB took 50-250 ms of a serial step).
void prefault_in_parallel(void* data, std::size_t bytes, unsigned threads);

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

// Makes malloc map every block of 128 KiB and more that its arena's free memory cannot hold
// on its own, returned to the system when it is freed (M_MMAP_THRESHOLD fixed: glibc otherwise
// raises the threshold to the size of each large block freed, then grows the arena of the
// thread that allocates, which keeps the memory). A read on many threads frees its parts'
// buffers on threads whose arenas the analysis then does not use: at --threads 16 a
// million-kernel nsys export held ~6 MB more than its file so. For a whole process (the CLI),
// not a library's caller; glibc only.
void return_large_blocks_when_freed();

}  // namespace kernlens
