// Faulting in a large new buffer on N threads, two ways side by side (issue 22): the kernel's
// MADV_POPULATE_WRITE, each thread populating its share (what prefault_in_parallel did before
// 328d32c), and kernlens's prefault_in_parallel, which writes a byte into each page. A fresh
// anonymous mapping with transparent huge pages asked for, as reserve_huge asks, each round.
//   bench_prefault_limit [MB] [THREADS...]     (default 88, the launch table of a million
//                                              launches; 1 2 4 8 16; ROUNDS env, default 5:
//                                              medians)
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "kernlens/common/memory.h"
#include "kernlens/common/parallel_chunks.h"

namespace {

constexpr std::size_t kHuge = std::size_t{2} << 20;

// Milliseconds `fault_in(data, bytes, threads)` takes on a fresh mapping of `bytes`.
double time_once(std::size_t bytes, unsigned threads, const std::function<void(char*, std::size_t, unsigned)>& fault_in) {
  void* map = mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) {
    std::perror("mmap");
    std::exit(2);
  }
  char* data = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(map) + kHuge - 1) & ~(kHuge - 1));
  kernlens::advise_huge_pages(data, bytes);
  const auto start = std::chrono::steady_clock::now();
  fault_in(data, bytes, threads);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  munmap(map, bytes + kHuge);
  return ms;
}

// Each of `threads` threads populates its share, cut on huge-page boundaries.
void populate(char* data, std::size_t bytes, unsigned threads) {
#ifdef MADV_POPULATE_WRITE
  const std::size_t parts = std::clamp<std::size_t>(bytes / kHuge, 1, threads);
  kernlens::run_parallel(parts, [&](std::size_t i) {
    const std::size_t from = bytes * i / parts & ~(kHuge - 1), to = i + 1 == parts ? bytes : bytes * (i + 1) / parts & ~(kHuge - 1);
    if (to > from) madvise(data + from, to - from, MADV_POPULATE_WRITE);
  });
#else
  (void)data;
  (void)bytes;
  (void)threads;
#endif
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t mb = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 88;
  std::vector<unsigned> thread_counts;
  for (int i = 2; i < argc; ++i) thread_counts.push_back(static_cast<unsigned>(std::atoi(argv[i])));
  if (thread_counts.empty()) thread_counts = {1, 2, 4, 8, 16};
  const int rounds = std::getenv("ROUNDS") ? std::max(1, std::atoi(std::getenv("ROUNDS"))) : 5;
  const std::size_t bytes = mb << 20;
  for (unsigned threads : thread_counts) {
    std::vector<double> populated, written;
    for (int r = 0; r < rounds; ++r) {  // interleaved, so that drift falls on both
      populated.push_back(time_once(bytes, threads, populate));
      written.push_back(time_once(bytes, threads, kernlens::prefault_in_parallel));
    }
    std::printf("%zu MB on %2u threads: MADV_POPULATE_WRITE %7.2f ms   prefault_in_parallel (writes) %7.2f ms\n", mb,
                threads, median(populated), median(written));
  }
  return 0;
}
