#include "kernlens/common/memory.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

#include "kernlens/common/parallel_chunks.h"

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

void prefault_in_parallel(void* data, std::size_t bytes, unsigned threads) {
#ifdef MADV_POPULATE_WRITE
  constexpr std::uintptr_t kPage = 4096, kHuge = std::uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kPage - 1);
  if (end <= begin) return;
  // Cuts on huge-page boundaries, so that no huge page is faulted by two threads.
  const std::size_t parts = std::clamp<std::size_t>((end - begin) / kHuge, 1, std::max(1u, threads));
  run_parallel(parts, [&](std::size_t i) {
    auto cut = [&](std::size_t k) {
      return k == 0 ? begin : k == parts ? end : std::min(end, (begin + (end - begin) * k / parts) & ~(kHuge - 1));
    };
    const std::uintptr_t from = std::max(begin, cut(i)), to = cut(i + 1);
    if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
  });
#else
  (void)data;
  (void)bytes;
  (void)threads;
#endif
}

void return_large_blocks_when_freed() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

}  // namespace kernlens
