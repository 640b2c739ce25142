// The machine's own limit on reading a file on N threads (issue 22's "near-linear scaling"):
// the file mapped as kernlens maps it, cut into 1 MiB parts that the threads take as they come
// free (as the raw page and trace readers do), every byte looked at once (the newlines
// counted, a parser's least work), the mapping made and dropped each round. No parsing, no
// analysis: what is left between this and `kernlens analyze` on the same file and threads is
// ours; what this does not gain from more threads (page faults on the page cache, memory
// bandwidth, busy CPUs) no reader can.
//   bench_read_limit FILE [THREADS...]     (default 1 2 4 8 16; ROUNDS env, default 5: medians)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kPartBytes = std::size_t{1} << 20;

// Newlines in [p, p + n): eight bytes at a time, as any scanner must at least look at each.
std::uint64_t count_newlines(const unsigned char* p, std::size_t n) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  constexpr std::uint64_t kNewlines = kOnes * '\n';
  std::uint64_t lines = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    const std::uint64_t x = w ^ kNewlines;  // a zero byte where a newline was
    lines += static_cast<std::uint64_t>(__builtin_popcountll((x - kOnes) & ~x & kHigh));
  }
  for (; i < n; ++i) lines += p[i] == '\n';
  return lines;
}

// One round: map, scan on `threads` threads, unmap. Returns seconds; `lines` the count.
double read_once(int fd, std::size_t bytes, unsigned threads, std::uint64_t& lines) {
  const auto start = std::chrono::steady_clock::now();
  void* map = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) {
    std::perror("mmap");
    std::exit(2);
  }
  madvise(map, bytes, MADV_SEQUENTIAL);  // as kernlens maps an input (common/file.cpp)
  const auto* data = static_cast<const unsigned char*>(map);
  const std::size_t parts = (bytes + kPartBytes - 1) / kPartBytes;
  std::atomic<std::size_t> next{0};
  std::atomic<std::uint64_t> total{0};
  auto work = [&] {
    std::uint64_t own = 0;
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < parts;) {
      const std::size_t from = i * kPartBytes;
      own += count_newlines(data + from, std::min(kPartBytes, bytes - from));
    }
    total.fetch_add(own, std::memory_order_relaxed);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  munmap(map, bytes);
  lines = total.load();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_read_limit FILE [THREADS...]\n");
    return 2;
  }
  const int fd = open(argv[1], O_RDONLY);
  struct stat st{};
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
    std::fprintf(stderr, "bench_read_limit: cannot read %s\n", argv[1]);
    return 2;
  }
  const auto bytes = static_cast<std::size_t>(st.st_size);
  std::vector<unsigned> counts;
  for (int i = 2; i < argc; ++i) counts.push_back(static_cast<unsigned>(std::max(1, std::atoi(argv[i]))));
  if (counts.empty()) counts = {1, 2, 4, 8, 16};
  const char* rounds_env = std::getenv("ROUNDS");
  const int rounds = std::max(1, rounds_env ? std::atoi(rounds_env) : 5);
  double one_thread = 0;
  for (unsigned threads : counts) {
    std::vector<double> times;
    std::uint64_t lines = 0;
    for (int r = 0; r < rounds; ++r) times.push_back(read_once(fd, bytes, threads, lines));
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    if (threads == 1) one_thread = median;
    std::printf("threads %2u  %.4f s  %6.2f GB/s  %s  (%llu lines)\n", threads, median, static_cast<double>(bytes) / median / 1e9,
                one_thread > 0 ? (std::to_string(one_thread / median).substr(0, 5) + "x one thread").c_str() : "",
                static_cast<unsigned long long>(lines));
  }
  close(fd);
  return 0;
}
