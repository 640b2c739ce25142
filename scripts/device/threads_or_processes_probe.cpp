// Issue 22: does the same work cost more CPU as threads of one process than as processes?
// The 8 M export's reader spends ~45% more CPU on 16 threads than on one, while 16 kernlens
// processes that share nothing spent 4% more than one alone (BENCHMARKS.md, "The yardstick").
// This probe runs one piece of work N times at once, started together, either on N threads of
// this process or in N forked processes, and prints each copy's CPU time against one copy
// alone (medians of 3 interleaved rounds). The work:
//   alu             integer hashing in a 256 KiB table (L2-resident): the cores themselves
//   stream          fills a 256 MiB buffer of the copy's own, then sums it 8 times: page faults
//                   and memory bandwidth
//   scan FILE...    SQLite steps the export's kernel table 4 times, five int64 columns a row, on a
//                   connection of the copy's own (copy i reads FILE[i % count]): kernlens's
//                   reader without kernlens
//   ranges FILE     copy i of N steps the i-th of N rowid ranges of the export's kernel table
//                   once, on a connection of its own, all on one file: the pattern of kernlens's
//                   own parts (each thread a range of one export), without kernlens; "alone" is
//                   the mean of each range read alone
//   pairs           alu on CPU 0 and CPU k together, for each k: CPUs that share a core
// Built by scripts/device/make_devrun.sh (the GPU machine has no compiler): g++ -O2 -std=c++20 -pthread
//   scripts/device/threads_or_processes_probe.cpp -lsqlite3 -o build/devrun/threads_or_processes_probe
//   threads_or_processes_probe WORK N [FILE...]     (scripts/device/threads_or_processes.sh runs them all)
#include <sched.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

namespace {

double cpu_seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

std::uint64_t alu_work() {
  std::vector<std::uint64_t> table(32768);  // 256 KiB
  std::uint64_t x = 0x9e3779b97f4a7c15ULL, sum = 0;
  for (auto& v : table) v = x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  for (std::uint64_t i = 0; i < 200'000'000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    sum += table[x & 32767];
    table[(x >> 20) & 32767] += sum;
  }
  return sum;
}

std::uint64_t stream_work() {
  constexpr std::size_t kWords = (256u << 20) / sizeof(std::uint64_t);
  std::vector<std::uint64_t> buffer(kWords, 1);  // its page faults counted: in one process they share one mm
  std::uint64_t sum = 0;
  for (int pass = 0; pass < 8; ++pass)
    for (std::size_t i = 0; i < kWords; i += 8) sum += buffer[i] + buffer[i + 3] + buffer[i + 7];
  return sum;
}

// A connection of the copy's own to the export, with the reader's small page cache.
sqlite3* open_export(const char* path) {
  sqlite3* db = nullptr;
  std::string uri = std::string("file:") + path + "?immutable=1";
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "cannot open %s\n", path);
    std::exit(2);
  }
  sqlite3_exec(db, "PRAGMA cache_size = -128", nullptr, nullptr, nullptr);
  return db;
}

// The kernel table's five int64 columns, `where` added to the SELECT.
sqlite3_stmt* prepare_kernel_scan(sqlite3* db, const char* path, const std::string& where) {
  sqlite3_stmt* stmt = nullptr;
  const std::string sql = "SELECT start, end, deviceId, correlationId, gridX FROM CUPTI_ACTIVITY_KIND_KERNEL" + where;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "%s: %s\n", path, sqlite3_errmsg(db));
    std::exit(2);
  }
  return stmt;
}

std::uint64_t sum_rows(sqlite3_stmt* stmt) {
  std::uint64_t sum = 0;
  while (sqlite3_step(stmt) == SQLITE_ROW)
    for (int c = 0; c < 5; ++c) sum += static_cast<std::uint64_t>(sqlite3_column_int64(stmt, c));
  return sum;
}

std::uint64_t scan_work(const char* path) {
  sqlite3* db = open_export(path);
  sqlite3_stmt* stmt = prepare_kernel_scan(db, path, "");
  std::uint64_t sum = 0;
  for (int pass = 0; pass < 4; ++pass, sqlite3_reset(stmt)) sum += sum_rows(stmt);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return sum;
}

// Copy i's part of `n`: the i-th of n equal rowid ranges of the kernel table, read once.
std::uint64_t scan_range_work(const char* path, int i, int n) {
  sqlite3* db = open_export(path);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL", -1, &stmt, nullptr);
  const std::int64_t rows = stmt && sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
  sqlite3_finalize(stmt);
  stmt = prepare_kernel_scan(db, path, " WHERE rowid BETWEEN ?1 AND ?2");
  sqlite3_bind_int64(stmt, 1, rows * i / n + 1);
  sqlite3_bind_int64(stmt, 2, rows * (i + 1) / n);
  const std::uint64_t sum = sum_rows(stmt);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return sum;
}

struct Shared {  // in memory shared with the forked copies
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  double cpu[1024];
};

void pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

// One copy: waits for all, works, records its CPU time.
template <class Work>
void copy(Shared& shared, int i, int n, clockid_t clock, const Work& work, int cpu) {
  pin(cpu);
  shared.ready.fetch_add(1);
  while (shared.ready.load() < n) {}
  const double c0 = cpu_seconds(clock);
  volatile std::uint64_t sink = work(i);
  (void)sink;
  shared.cpu[i] = cpu_seconds(clock) - c0;
}

// N copies at once on threads or processes; the wall time of all, each copy's CPU time.
template <class Work>
std::pair<double, std::vector<double>> run(bool processes, int n, const Work& work, const std::vector<int>& cpus = {}) {
  auto* shared = new (mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)) Shared;
  auto cpu_of = [&](int i) { return i < int(cpus.size()) ? cpus[i] : -1; };
  const double w0 = cpu_seconds(CLOCK_MONOTONIC);
  if (processes) {
    std::vector<pid_t> pids;
    for (int i = 0; i < n; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        copy(*shared, i, n, CLOCK_PROCESS_CPUTIME_ID, work, cpu_of(i));
        _exit(0);
      }
      pids.push_back(pid);
    }
    for (pid_t pid : pids) waitpid(pid, nullptr, 0);
  } else {
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) threads.emplace_back([&, i] { copy(*shared, i, n, CLOCK_THREAD_CPUTIME_ID, work, cpu_of(i)); });
    for (auto& t : threads) t.join();
  }
  const double wall = cpu_seconds(CLOCK_MONOTONIC) - w0;
  std::vector<double> cpu(shared->cpu, shared->cpu + n);
  munmap(shared, sizeof(Shared));
  return {wall, cpu};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// One copy alone, N on threads, N in processes, interleaved `rounds` times: the medians.
// `each_alone`: the copies' work differs (ranges), so "alone" is the mean of every copy's work
// run alone, one after the other.
template <class Work>
void compare(const char* name, int n, const Work& work, int rounds = 3, bool each_alone = false) {
  std::vector<double> alone, copies[2], walls[2], mins[2], maxes[2];
  for (int r = 0; r < rounds; ++r) {
    double sum = 0;
    for (int i = 0; i < (each_alone ? n : 1); ++i) sum += run(false, 1, [&](int) { return work(i); }).second[0];
    alone.push_back(sum / (each_alone ? n : 1));
    for (int processes : {0, 1}) {
      auto [wall, cpu] = run(processes == 1, n, work);
      walls[processes].push_back(wall);
      copies[processes].push_back(median(cpu));
      mins[processes].push_back(*std::min_element(cpu.begin(), cpu.end()));
      maxes[processes].push_back(*std::max_element(cpu.begin(), cpu.end()));
    }
  }
  const double one = median(alone);
  for (int processes : {0, 1}) {
    std::printf("%s %s %d: wall %.3f s, a copy's CPU min %.3f median %.3f max %.3f s, alone %.3f s: median %+.0f%% "
                "(medians of %d rounds)\n",
                name, processes ? "processes" : "threads", n, median(walls[processes]), median(mins[processes]),
                median(copies[processes]), median(maxes[processes]), one, (median(copies[processes]) / one - 1) * 100, rounds);
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s alu|stream|pairs|scan|ranges N [FILE...]\n", argv[0]);
    return 2;
  }
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  const std::string work = argv[1];
  const int n = std::clamp(std::atoi(argv[2]), 1, 1024);
  if (work == "alu") compare("alu", n, [](int) { return alu_work(); });
  if (work == "stream") compare("stream", n, [](int) { return stream_work(); });
  if (work == "scan") {
    std::vector<const char*> files(argv + 3, argv + argc);
    if (files.empty()) return 2;
    compare("scan", n, [&](int i) { return scan_work(files[std::size_t(i) % files.size()]); });
  }
  if (work == "ranges") {
    if (argc < 4) return 2;
    const char* file = argv[3];
    compare("ranges", n, [&](int i) { return scan_range_work(file, i, n); }, 3, true);
  }
  if (work == "pairs") {
    const double alone = run(false, 1, [](int) { return alu_work(); }, {0}).second[0];
    for (int k = 1; k < n; ++k) {
      auto cpu = run(false, 2, [](int) { return alu_work(); }, {0, k}).second;
      std::printf("pairs CPU 0 + CPU %d: %.3f / %.3f s, alone %.3f s\n", k, cpu[0], cpu[1], alone);
      std::fflush(stdout);
    }
  }
  return 0;
}
