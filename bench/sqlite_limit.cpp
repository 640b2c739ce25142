// What SQLite itself allows on N threads for the nsys reader's kernel rows (issue 22's
// "near-linear scaling"): the SELECT kernlens prepares (the 19 columns of
// CUPTI_ACTIVITY_KIND_KERNEL it reads, and the rowid, over `rowid >= ?1 AND rowid < ?2`), the
// table cut into 4 rowid ranges a thread that the threads take as they come free, each thread on
// a connection of its own opened as kernlens opens one for a scan (immutable, no mutex, a 128
// KiB page cache), every column fetched once with sqlite3_column_int64 and summed: SQLite's own
// work, nothing of ours. And, as the machine's limit for work that touches no memory, a compute
// loop of a fixed total split across the threads. What `kernlens analyze --verbose` shows for
// "kernel rows" beyond the first figure is ours; what the first does not gain from more threads,
// no reader built on SQLite can. scripts/device/read_limit.sh runs it on the GPU machine.
//   bench_sqlite_limit FILE [THREADS...]   (default 1 2 4 8 16; ROUNDS env, default 5: medians;
//                                          NO_COMPUTE: the SQLite rows only)
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

constexpr const char* kSelect =
    "SELECT \"start\", \"end\", \"deviceId\", \"contextId\", \"streamId\", \"correlationId\", "
    "\"globalPid\", \"demangledName\", \"shortName\", \"mangledName\", \"gridX\", \"gridY\", "
    "\"gridZ\", \"blockX\", \"blockY\", \"blockZ\", \"registersPerThread\", "
    "\"staticSharedMemory\", \"dynamicSharedMemory\", rowid FROM CUPTI_ACTIVITY_KIND_KERNEL "
    "WHERE rowid >= ?1 AND rowid < ?2";
constexpr int kColumns = 20;
constexpr unsigned kPartsPerThread = 4;  // as the reader (sqlite_reader.cpp)

sqlite3* open_immutable(const std::string& path) {
  sqlite3* db = nullptr;
  const std::string uri = "file:" + path + "?immutable=1";
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "bench_sqlite_limit: cannot open %s: %s\n", path.c_str(), sqlite3_errmsg(db));
    std::exit(2);
  }
  // The reader's page cache for a scan (DbSource::open_for_a_scan: 128 KiB), unless
  // SQLITE_CACHE says otherwise (PRAGMA cache_size; SQLite's default is -2000, 2 MB); and
  // SQLITE_MMAP_BYTES (PRAGMA mmap_size) to compare, for the measurement only.
  const char* cache = std::getenv("SQLITE_CACHE");
  const char* mmap_bytes = std::getenv("SQLITE_MMAP_BYTES");
  const std::string pragmas = std::string("PRAGMA cache_size = ") + (cache ? cache : "-128") +
                              (mmap_bytes ? std::string("; PRAGMA mmap_size = ") + mmap_bytes : "");
  sqlite3_exec(db, pragmas.c_str(), nullptr, nullptr, nullptr);
  return db;
}

std::int64_t single_int(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  std::int64_t v = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
    v = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  return v;
}

// One round on `threads` threads, each opening its connection. Returns seconds; `rows` read.
double rows_once(const std::string& path, std::int64_t first, std::int64_t last, unsigned threads,
                 std::uint64_t& rows, std::uint64_t& checksum) {
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t parts = std::uint64_t{threads} * kPartsPerThread;
  const std::uint64_t span = static_cast<std::uint64_t>(last - first) + 1;
  std::atomic<std::uint64_t> next{0}, total_rows{0}, total_sum{0};
  auto work = [&] {
    sqlite3* db = open_immutable(path);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, kSelect, -1, &stmt, nullptr) != SQLITE_OK) {
      std::fprintf(stderr, "bench_sqlite_limit: %s\n", sqlite3_errmsg(db));
      std::exit(2);
    }
    std::uint64_t own_rows = 0, own_sum = 0;
    for (std::uint64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < parts;) {
      sqlite3_reset(stmt);
      sqlite3_bind_int64(stmt, 1, first + static_cast<std::int64_t>(span * i / parts));
      sqlite3_bind_int64(stmt, 2, first + static_cast<std::int64_t>(span * (i + 1) / parts));
      while (sqlite3_step(stmt) == SQLITE_ROW) {
        ++own_rows;
        for (int c = 0; c < kColumns; ++c) own_sum += static_cast<std::uint64_t>(sqlite3_column_int64(stmt, c));
      }
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    total_rows += own_rows;
    total_sum += own_sum;
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  rows = total_rows;
  checksum = total_sum;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A fixed total of dependent multiply-adds in registers, split across the threads.
double compute_once(unsigned threads, std::uint64_t& checksum) {
  constexpr std::uint64_t kTotal = std::uint64_t{1} << 30;
  const auto start = std::chrono::steady_clock::now();
  std::atomic<std::uint64_t> total{0};
  auto work = [&](unsigned t) {
    std::uint64_t x = 0x9E3779B97F4A7C15ULL + t;
    for (std::uint64_t i = 0; i < kTotal / threads; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    total += x;
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& t : pool) t.join();
  checksum = total;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string fmt_ratio(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ", %.2fx one thread", r);
  return buf;
}

template <class Round>
double median_of(int rounds, Round round) {
  std::vector<double> times;
  for (int r = 0; r < rounds; ++r) times.push_back(round());
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_sqlite_limit NSYS_SQLITE [THREADS...]\n");
    return 2;
  }
  const std::string path = argv[1];
  sqlite3* db = open_immutable(path);
  const std::int64_t first = single_int(db, "SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL");
  const std::int64_t last = single_int(db, "SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL");
  sqlite3_close(db);
  std::vector<unsigned> counts;
  for (int i = 2; i < argc; ++i) counts.push_back(static_cast<unsigned>(std::max(1, std::atoi(argv[i]))));
  if (counts.empty()) counts = {1, 2, 4, 8, 16};
  const char* rounds_env = std::getenv("ROUNDS");
  const int rounds = std::max(1, rounds_env ? std::atoi(rounds_env) : 5);
  double rows_one = 0, compute_one = 0;
  for (unsigned threads : counts) {
    std::uint64_t rows = 0, sum = 0, x = 0;
    const double t_rows = median_of(rounds, [&] { return rows_once(path, first, last, threads, rows, sum); });
    const bool compute = !std::getenv("NO_COMPUTE");  // for comparing SQLite settings only
    const double t_compute = compute ? median_of(rounds, [&] { return compute_once(threads, x); }) : 0.0;
    if (threads == 1) std::tie(rows_one, compute_one) = std::pair{t_rows, t_compute};
    // The ratios to one thread where this call measured one thread first.
    auto ratio = [](double one, double t) { return one > 0 && t > 0 ? fmt_ratio(one / t) : std::string(); };
    std::printf("threads %2u  kernel rows %.4f s%s (%llu rows, sum %llx)", threads, t_rows, ratio(rows_one, t_rows).c_str(),
                static_cast<unsigned long long>(rows), static_cast<unsigned long long>(sum));
    if (compute) std::printf("  compute %.4f s%s (%llx)", t_compute, ratio(compute_one, t_compute).c_str(), static_cast<unsigned long long>(x));
    std::printf("\n");
  }
  return 0;
}
