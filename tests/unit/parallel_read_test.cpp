// Reading with several threads (--threads) gives the profile one thread gives: every launch,
// name, metric, device, stage, warning and error alike, on every fixture and on the fuzz
// harnesses' seeds (cut from the fixtures as scripts/fuzz.sh cuts them) with mutations that aim
// at the cuts between parts: stray quotes, quoted line breaks, console lines, truncation.
// KERNLENS_FUZZ_CORPUS=DIR adds the files of a real corpus (build/fuzz/corpus after a run).
#include <gtest/gtest.h>
#include <malloc.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <latch>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "kernlens/common/file.h"
#include "kernlens/common/memory.h"
#include "kernlens/common/parallel_chunks.h"
#include "kernlens/common/step_times.h"
#include "kernlens/ingest/json/trace_tokenizer.h"
#include "kernlens/ingest/ncu/raw.h"
#include "kernlens/ingest/pytorch/trace.h"
#include "kernlens/ingest/nsys/sqlite_schema.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/model/input_format.h"
#include "test_util.h"

namespace kernlens::ingest {
namespace {

namespace fs = std::filesystem;

template <class T>
std::string opt(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : "-";
}

// Everything a reader put in the profile, as text (doubles exactly, as hex floats).
std::string describe(const model::Profile& p, const Status& status) {
  std::ostringstream o;
  o << "status " << (status ? "ok" : status.error().to_string()) << "\n";
  for (const auto& in : p.inputs) {
    o << "input " << in.path << " " << model::format_id(in.format) << "\n";
    for (const auto& w : in.warnings) o << "  warning " << w.to_string() << "\n";
    if (in.distributed) o << "  rank " << in.distributed->rank << "/" << in.distributed->world_size << " " << in.distributed->backend << "\n";
  }
  for (const auto& r : p.stage_ranges) {
    o << fmt::format("stage '{}' {} {} {}\n", model::push_pop_path(p.stages[r.stage]), r.start_ns, r.end_ns, r.input);
  }
  for (const auto& d : p.devices) {
    o << fmt::format("device {} '{}' {} {} {:a} {:a} {} {} {} {} {}\n", d.ordinal, d.name, d.cc, opt(d.sm_count),
                     d.sm_clock_max_hz.value_or(-1), d.memory_clock_max_hz.value_or(-1), opt(d.memory_bus_width_bits),
                     opt(d.l2_cache_bytes), opt(d.memory_total_bytes), opt(d.max_threads_per_sm),
                     opt(d.max_shared_memory_per_sm_bytes));
  }
  for (const auto& l : p.launches) {
    const auto& proc = p.processes[l.process];
    const auto& c = p.config_of(l);
    o << fmt::format("launch '{}' {} {} {} {}/{}/{} {} {} {} {} {} ({},{},{}) ({},{},{}) {} {} {} {} {:a} {} '{}' {} [",
                     p.names[l.name], static_cast<int>(l.kind), l.bytes, l.id, proc.host, proc.pid, proc.name, l.process,
                     l.thread_id, l.context_id, l.stream_id, l.device_ordinal, c.grid.x, c.grid.y, c.grid.z, c.block.x,
                     c.block.y, c.block.z, c.registers_per_thread, c.static_shared_bytes, c.dynamic_shared_bytes,
                     opt(std::optional<std::int64_t>(l.start_ns)), l.duration_ns.value_or(-1), l.count, model::push_pop_path(p.stages[l.stage]),
                     l.input);
    for (const auto& m : p.metrics_of(l)) o << fmt::format("{}={:a} ", p.metrics[m.id].name, m.value);
    o << "] rules " << p.rules_of(l).size() << "\n";
  }
  return o.str();
}

std::string read_bytes(std::string_view bytes, unsigned threads) {
  model::Profile profile;
  ReadOptions options;
  options.threads = threads;
  options.min_part_bytes = 1;  // split whatever the size
  Status s = read_input_bytes(bytes, "input.csv", profile, options);
  return describe(profile, s);
}

// A file of `format` read by a streaming reader (`read`), each window split in turn.
std::string read_streamed(const std::string& path, model::InputFormat format, unsigned threads,
                          const std::function<Status(ReadContext&)>& read) {
  model::Profile profile;
  ReadOptions options;
  options.threads = threads;
  options.min_part_bytes = 1;
  profile.inputs.push_back(model::InputInfo{path, format, "", {}, {}});
  ReadContext ctx{path, profile, 0, nullptr, &options};
  Status s = read(ctx);
  return describe(profile, s);
}

// An ncu raw page read window by window (mapped, or streamed through ChunkReader), with windows
// of `chunk` bytes split in turn.
std::string read_streamed(const std::string& path, unsigned threads, std::size_t chunk,
                          FileAccess access = FileAccess::kStreamed) {
  return read_streamed(path, model::InputFormat::kNcuRawCsv, threads, [&](ReadContext& ctx) {
    return read_ncu_raw_csv_file(path, fs::file_size(path), ctx, chunk, 1 << 20, access);
  });
}

// `text` with `piece` put in at `at`: built anew, as std::string::insert draws a false
// -Wrestrict from GCC 12 once inlined (an error under -Werror).
std::string with_inserted(const std::string& text, std::size_t at, std::string_view piece) {
  std::string out(text, 0, at);
  out += piece;
  out.append(text, at);
  return out;
}

std::vector<fs::path> fixture_files() {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(test::fixture(""))) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Under the sanitizers (scripts/test.sh's step 2 on CI's two cores, where these tests took 6 of
// its 10 minutes) the corpus tests read a sample of their cases: one entry of each list of
// thread counts and windows, a different one in turn, and every eighth input of a corpus. So do
// they again on the portable scanner path (unit_scanners_portable_simd sets
// KERNLENS_TEST_SAMPLED=1: the scanners' own tests compare the two paths case by case). Step 1
// reads every case in its optimized build on the default path (ParallelRead.*).
#ifdef KERNLENS_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
bool sampled_by_environment() {
  const char* sampled = std::getenv("KERNLENS_TEST_SAMPLED");
  return sampled && std::string_view(sampled) == "1";
}
const bool kSampled = kSanitized || sampled_by_environment();
constexpr std::size_t kSampleEvery = 8;  // of a corpus's inputs, when sampled

// `all`, or when sampled its entry number `turn` (modulo its size).
template <class T>
std::vector<T> all_or_one(std::initializer_list<T> all, std::size_t turn) {
  if (!kSampled) return all;
  return {all.begin()[turn % all.size()]};
}

// Whether input number `i` of a corpus is read: every one, or every kSampleEvery-th when
// sampled.
bool in_sample(std::size_t i) { return !kSampled || i % kSampleEvery == 0; }

bool is_ncu_raw(const std::string& bytes) {
  return bytes.find("\"ID\",") != std::string::npos && bytes.find("gpu__time_duration") != std::string::npos;
}

// The fuzz seeds of one file (scripts/fuzz.sh) and mutations of them around line breaks and
// quotes.
std::vector<std::string> seeds_and_mutations(const std::string& content, std::uint32_t seed) {
  auto head_lines = [&](int n) {
    std::size_t at = 0;
    for (int i = 0; i < n && at != std::string::npos; ++i) at = content.find('\n', at == 0 && i == 0 ? 0 : at + 1);
    return at == std::string::npos ? content : content.substr(0, at + 1);
  };
  std::vector<std::string> out = {content.substr(0, 8192), head_lines(3), head_lines(40), head_lines(400)};
  std::mt19937 rng(seed);
  const std::string base = head_lines(400);
  auto at = [&](std::size_t size) { return std::uniform_int_distribution<std::size_t>(0, size)(rng); };
  for (int i = 0; i < 12; ++i) {
    std::string m = base;
    switch (i % 6) {
      case 0: m = with_inserted(m, at(m.size()), "\""); break;                            // a stray quote
      case 1: m = with_inserted(m, at(m.size()), "\n"); break;                            // a line break, maybe quoted
      case 2: {                                                                // a console line, odd quotes
        std::size_t nl = m.find('\n', at(m.size()));
        if (nl != std::string::npos) m = with_inserted(m, nl + 1, "==WARNING== a \"quote\" and \"one more\n");
        break;
      }
      case 3: m.resize(at(m.size())); break;                                   // cut short
      case 4: m = with_inserted(m, at(m.size()), "\"\"\n\"\""); break;                     // escaped quotes around a break
      case 5: if (!m.empty()) m[at(m.size() - 1)] = ','; break;                // a field too many
    }
    out.push_back(std::move(m));
  }
  return out;
}

// Parts are parsed once each, merged in order and one at a time, never more than `slots`
// parsed and not merged; a merge that says stop ends the merging there, and no part is
// begun after it.
// The chunks cover every item once, in order, in stretches that differ by one item at most.
// Stretches sorted on threads and merged in pairs: std::sort's order for a total order, on any
// number of threads, with an odd number of stretches (a stretch merged in a later round),
// repeated keys told apart by a second field, and too few items for a second stretch.
TEST(SortInParallel, TheOrderOfOneSortOnAnyNumberOfThreads) {
  std::vector<std::pair<std::int64_t, std::size_t>> items;
  std::uint64_t x = 7;
  for (std::size_t i = 0; i < 200000; ++i) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    items.emplace_back(static_cast<std::int64_t>((x >> 33) % 50000) - 1000, i);  // keys repeat
  }
  auto sorted = items;
  std::sort(sorted.begin(), sorted.end());
  for (unsigned threads : {1u, 2u, 3u, 5u, 8u}) {
    auto mine = items;
    sort_in_parallel(mine, std::less<>(), threads);
    std::vector<std::pair<std::int64_t, std::size_t>> few(items.begin(), items.begin() + 1000);
    sort_in_parallel(few, std::less<>(), threads);
    EXPECT_EQ(mine, sorted) << threads << " threads";
    EXPECT_TRUE(std::is_sorted(few.begin(), few.end())) << threads << " threads";
  }
}

// Stretches checked on threads, each with the first item of the next: std::is_sorted's answer
// on any number of threads, for a single descent anywhere, across a stretch boundary included,
// and for too few items for a second stretch.
TEST(IsSortedInParallel, TheAnswerOfOneCheckOnAnyNumberOfThreads) {
  std::vector<std::int64_t> items(100000);
  for (std::size_t i = 0; i < items.size(); ++i) items[i] = static_cast<std::int64_t>(i / 3);  // equal neighbours are sorted
  for (unsigned threads : {1u, 2u, 3u, 5u, 8u}) {
    EXPECT_TRUE(is_sorted_in_parallel(items, std::less<>(), threads)) << threads << " threads";
    // A descent at every place a stretch of 2..8 threads begins or ends, and inside one.
    for (std::size_t at : {std::size_t{1}, std::size_t{20000}, std::size_t{25000}, std::size_t{33333}, std::size_t{33334},
                           std::size_t{50000}, std::size_t{99999}}) {
      auto broken = items;
      broken[at] = broken[at - 1] - 1;
      EXPECT_EQ(is_sorted_in_parallel(broken, std::less<>(), threads), false) << threads << " threads, descent at " << at;
    }
  }
  const std::vector<std::int64_t> few = {3, 2};
  EXPECT_FALSE(is_sorted_in_parallel(few, std::less<>(), 8u));
  EXPECT_TRUE(is_sorted_in_parallel(std::vector<std::int64_t>{}, std::less<>(), 8u));
}

// Keys numbered in stretches on threads and merged: the numbers of one pass in first-come
// order on any number of threads, with keys first met in a later stretch, keys of one stretch
// only, vector keys whose room is reused between items, and no items at all.
TEST(NumberFirstComeInParallel, TheNumbersOfOnePassOnAnyNumberOfThreads) {
  std::vector<std::vector<std::uint32_t>> items;
  std::uint64_t x = 11;
  for (std::size_t i = 0; i < 60000; ++i) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    const auto k = static_cast<std::uint32_t>((x >> 33) % (i < 30000 ? 40 : 400));  // new keys in the later half
    items.push_back(std::vector<std::uint32_t>(k % 4 + 1, k));
  }
  std::map<std::vector<std::uint32_t>, std::uint32_t> one_pass;
  std::vector<std::uint32_t> expected;
  std::vector<std::size_t> expected_first;
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto [it, is_new] = one_pass.try_emplace(items[i], static_cast<std::uint32_t>(one_pass.size()));
    if (is_new) expected_first.push_back(i);
    expected.push_back(it->second);
  }
  struct Hash {
    std::size_t operator()(const std::vector<std::uint32_t>& v) const { return v.empty() ? 0 : v[0] * 7 + v.size(); }
  };
  for (unsigned threads : {1u, 2u, 3u, 7u, 16u}) {
    const FirstComeIds ids = number_first_come_in_parallel<std::vector<std::uint32_t>, Hash>(
        items.size(), threads, [&](std::size_t i, std::vector<std::uint32_t>& key) { key.assign(items[i].begin(), items[i].end()); });
    EXPECT_EQ(ids.of_item, expected) << threads << " threads";
    EXPECT_EQ(ids.first_item, expected_first) << threads << " threads";
  }
  const FirstComeIds none = number_first_come_in_parallel<int>(0, 8u, [](std::size_t, int& key) { key = 1; });
  EXPECT_TRUE(none.of_item.empty());
  EXPECT_TRUE(none.first_item.empty());
}

TEST(RunInChunks, EveryItemOnceInOrderedStretchesOfAboutEqualSize) {
  for (std::size_t items : {0u, 1u, 7u, 1000u}) {
    for (std::size_t chunks : {1u, 3u, 8u}) {
      std::vector<std::pair<std::size_t, std::size_t>> stretch(chunks, {SIZE_MAX, SIZE_MAX});
      std::vector<std::atomic<int>> seen(items);
      run_in_chunks(items, chunks, [&](std::size_t c, std::size_t begin, std::size_t end) {
        stretch[c] = {begin, end};
        for (std::size_t i = begin; i < end; ++i) seen[i].fetch_add(1);
      });
      EXPECT_EQ(stretch.front().first, 0u);
      EXPECT_EQ(stretch.back().second, items);
      for (std::size_t c = 0; c < chunks; ++c) {
        if (c > 0) {
          EXPECT_EQ(stretch[c].first, stretch[c - 1].second) << items << " in " << chunks;
        }
        EXPECT_LE(stretch[c].second - stretch[c].first, items / chunks + 1);
      }
      for (const auto& n : seen) EXPECT_EQ(n.load(), 1);
    }
  }
}

// More stretches than threads: the stretches run_in_chunks cuts, each run once, on no more
// threads than asked for (a thread takes the next stretch when it is done with one).
TEST(RunInChunksOn, TheSameStretchesEachOnceOnAtMostThatManyThreads) {
  for (std::size_t items : {0u, 1u, 7u, 1000u}) {
    for (std::size_t chunks : {1u, 3u, 8u, 40u}) {
      for (std::size_t threads : {0u, 1u, 2u, 5u, 64u}) {
        std::vector<std::pair<std::size_t, std::size_t>> expected(chunks), stretch(chunks, {SIZE_MAX, SIZE_MAX});
        run_in_chunks(items, chunks, [&](std::size_t c, std::size_t begin, std::size_t end) { expected[c] = {begin, end}; });
        std::vector<std::atomic<int>> runs(chunks);
        std::mutex mutex;
        std::set<std::thread::id> ran_on;
        run_in_chunks_on(items, chunks, threads, [&](std::size_t c, std::size_t begin, std::size_t end) {
          runs[c].fetch_add(1);
          stretch[c] = {begin, end};
          std::lock_guard lock(mutex);
          ran_on.insert(std::this_thread::get_id());
        });
        EXPECT_EQ(stretch, expected) << items << " in " << chunks << " on " << threads;
        for (const auto& n : runs) EXPECT_EQ(n.load(), 1);
        EXPECT_LE(ran_on.size(), std::clamp<std::size_t>(threads, 1, chunks)) << chunks << " on " << threads;
      }
    }
  }
  bool ran = false;
  run_in_chunks_on(10, 0, 4, [&](std::size_t, std::size_t, std::size_t) { ran = true; });
  EXPECT_FALSE(ran);
}

// One stretch for every `least` items, up to four a thread; one on one thread, at least one.
TEST(StretchesForThreads, OneForEveryLeastItemsUpToFourAThread) {
  EXPECT_EQ(stretches_for_threads(100000, 4096, 1), 1u);
  EXPECT_EQ(stretches_for_threads(100000, 4096, 2), 8u);
  EXPECT_EQ(stretches_for_threads(100000, 4096, 16), 24u);
  EXPECT_EQ(stretches_for_threads(10, 4096, 8), 1u);
  EXPECT_EQ(stretches_for_threads(0, 4096, 8), 1u);
  EXPECT_EQ(stretches_for_threads(50, 0, 8), 32u);  // no least: the items themselves
}

// Every task of a call runs at once with the others (the nsys reader's threads wait for the one
// that makes their slots): here each waits at a latch that opens only when all have arrived, in
// calls nested in the tasks of another and in two calls side by side.
TEST(RunParallel, EveryTaskRunsAtOnceNestedAndSideBySide) {
  auto all_at_once = [](std::size_t n) {
    std::latch arrived(static_cast<std::ptrdiff_t>(n));
    std::vector<std::atomic<int>> ran(n);
    run_parallel(n, [&](std::size_t i) {
      arrived.arrive_and_wait();
      ran[i].fetch_add(1);
    });
    return std::all_of(ran.begin(), ran.end(), [](const auto& r) { return r.load() == 1; });
  };
  EXPECT_TRUE(all_at_once(1));
  EXPECT_TRUE(all_at_once(8));
  std::vector<char> inner(4, 0);
  run_parallel(4, [&](std::size_t i) { inner[i] = all_at_once(5); });
  EXPECT_EQ(inner, std::vector<char>(4, 1));
  bool first = false, second = false;
  run_side_by_side([&] { first = all_at_once(6); }, [&] { second = all_at_once(6); });
  EXPECT_TRUE(first);
  EXPECT_TRUE(second);
}

// The threads are kept between calls: ten calls of four tasks that wait for each other, apart
// in time, run their three other tasks on a few threads, not on thirty new ones.
TEST(RunParallel, ThreadsAreKeptBetweenCalls) {
  std::mutex mutex;
  std::set<pid_t> threads;  // kernel thread ids: a pthread's id is reused once it is joined
  for (int call = 0; call < 10; ++call) {
    std::latch arrived(4);
    run_parallel(4, [&](std::size_t i) {
      arrived.arrive_and_wait();  // on four threads at once
      if (i == 0) return;
      std::lock_guard lock(mutex);
      threads.insert(gettid());
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // each thread parks again
  }
  EXPECT_GE(threads.size(), 3u);
  EXPECT_LE(threads.size(), 6u);
}

// A child forked after the threads were kept has none of them: its calls start their own
// (a hang here is caught by the child's alarm).
TEST(RunParallel, AForkedChildRunsItsOwnThreads) {
  run_parallel(4, [](std::size_t) {});
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(30);
    std::latch arrived(4);
    run_parallel(4, [&](std::size_t) { arrived.arrive_and_wait(); });
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

TEST(RunOrderedParts, EachPartMergedOnceInOrderWithBoundedPartsInFlight) {
  std::mt19937 rng(7);
  for (unsigned threads : {0u, 1u, 2u, 3u, 16u}) {
    for (std::size_t slots : {std::size_t{1}, std::size_t{2}, std::size_t{5}}) {
      for (std::size_t parts : {std::size_t{0}, std::size_t{1}, std::size_t{9}, std::size_t{200}}) {
        for (std::size_t stop_at : {parts, parts / 3}) {
          std::vector<std::uint32_t> delay_us(parts);
          for (auto& d : delay_us) d = static_cast<std::uint32_t>(rng() % 50);
          std::mutex mutex;
          std::vector<std::size_t> asked, merged;
          std::vector<int> parsed(parts, 0);
          std::size_t in_flight_max = 0, merged_count = 0;
          std::atomic<int> merging{0};
          std::vector<std::size_t> slot_holds(slots, SIZE_MAX);
          const std::size_t done = run_ordered_parts(
              threads, slots,
              [&](std::size_t i, std::size_t slot) {
                asked.push_back(i);  // never two at once: no lock
                if (i == parts) return false;
                slot_holds[slot] = i;
                return true;
              },
              [&](std::size_t i, std::size_t slot) {
                std::this_thread::sleep_for(std::chrono::microseconds(delay_us[i]));
                std::lock_guard lock(mutex);
                EXPECT_EQ(slot_holds[slot], i);
                EXPECT_EQ(slot, i % slots);
                ++parsed[i];
                in_flight_max = std::max(in_flight_max, i + 1 - merged_count);
              },
              [&](std::size_t i, std::size_t slot) {
                EXPECT_EQ(merging.fetch_add(1), 0);
                EXPECT_EQ(slot_holds[slot], i);
                {
                  std::lock_guard lock(mutex);
                  merged.push_back(i);
                  ++merged_count;
                }
                merging.fetch_sub(1);
                return i != stop_at;
              });
          const std::size_t expected = stop_at < parts ? stop_at + 1 : parts;
          SCOPED_TRACE(fmt::format("{} threads, {} slots, {} parts, stop at {}", threads, slots, parts, stop_at));
          EXPECT_EQ(done, expected);
          ASSERT_EQ(merged.size(), expected);
          for (std::size_t i = 0; i < merged.size(); ++i) EXPECT_EQ(merged[i], i);
          for (std::size_t i = 0; i < asked.size(); ++i) EXPECT_EQ(asked[i], i);
          for (std::size_t i = 0; i < parts; ++i) {
            EXPECT_LE(parsed[i], 1) << i;
            if (i < expected) {
              EXPECT_EQ(parsed[i], 1) << i;
            } else if (i >= expected + slots) {
              EXPECT_EQ(parsed[i], 0) << i;  // none begun after the stop
            }
          }
          EXPECT_LE(in_flight_max, slots);
          if (stop_at == parts) {
            EXPECT_EQ(asked.size(), parts + 1);  // asked until there was none
          }
        }
      }
    }
  }
}

// A thread waiting in join() takes no part until it returns, and the others carry the parts on
// meanwhile: threads 1-3 join once part 49 is merged, so every part they parse comes after it;
// every part is merged once, in order, and join() runs once for each thread.
TEST(RunOrderedParts, ThreadsThatJoinLateTakeNoPartBeforeTheyJoin) {
  constexpr std::size_t kParts = 100, kOpenAfter = 49;
  std::promise<void> open;
  const std::shared_future<void> opened = open.get_future().share();
  std::mutex mutex;
  std::vector<std::size_t> joined;
  std::vector<std::thread::id> parsed_by(kParts);
  std::vector<std::size_t> merged;
  const std::thread::id caller = std::this_thread::get_id();
  const std::size_t n = run_ordered_parts(
      4, 4, [&](std::size_t i, std::size_t) { return i < kParts; },
      [&](std::size_t i, std::size_t) { parsed_by[i] = std::this_thread::get_id(); },
      [&](std::size_t i, std::size_t) {
        merged.push_back(i);
        if (i == kOpenAfter) open.set_value();
        return true;
      },
      [&](std::size_t thread) {
        {
          std::lock_guard lock(mutex);
          joined.push_back(thread);
        }
        if (thread > 0) opened.wait();
      });
  EXPECT_EQ(n, kParts);
  std::vector<std::size_t> in_order(kParts);
  for (std::size_t i = 0; i < kParts; ++i) in_order[i] = i;
  EXPECT_EQ(merged, in_order);
  for (std::size_t i = 0; i <= kOpenAfter; ++i) EXPECT_EQ(parsed_by[i], caller) << "part " << i << " parsed before thread 0 alone";
  std::sort(joined.begin(), joined.end());
  EXPECT_EQ(joined, (std::vector<std::size_t>{0, 1, 2, 3}));
}

// The k-th waiting thread goes once k threads were handed over, one at a time, and every one
// once all were (a read that ends early); handing one over after that leaves them all handed.
TEST(ThreadHandover, TheKthWaiterGoesOnceKWereHandedOver) {
  ThreadHandover handover;
  std::array<std::atomic<bool>, 3> went{};
  std::vector<std::thread> waiters;
  for (std::size_t k = 0; k < went.size(); ++k) {
    waiters.emplace_back([&, k] {
      handover.wait_for(k + 1);
      went[k] = true;
    });
  }
  auto wait_until = [](const std::atomic<bool>& flag) {
    for (int i = 0; i < 5000 && !flag; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return flag.load();
  };
  auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); };
  settle();
  EXPECT_FALSE(went[0] || went[1] || went[2]);
  handover.release_one();
  EXPECT_TRUE(wait_until(went[0]));
  settle();
  EXPECT_FALSE(went[1] || went[2]);
  handover.release_one();
  EXPECT_TRUE(wait_until(went[1]));
  settle();
  EXPECT_FALSE(went[2]);
  handover.release_all();
  EXPECT_TRUE(wait_until(went[2]));
  for (auto& w : waiters) w.join();
  handover.release_one();
  handover.wait_for(std::size_t{1} << 40);  // returns at once: all were handed over
}

TEST(ParallelRead, EveryFixtureReadsTheSameOnAnyNumberOfThreads) {
  std::size_t compared = 0, raw = 0, turn = 0;
  for (const auto& file : fixture_files()) {
    for (unsigned threads : all_or_one({2u, 3u, 8u}, turn++)) {
      model::Profile one, many;
      ReadOptions o1, on;
      o1.threads = 1;
      on.threads = threads;
      on.min_part_bytes = 1;
      Status s1 = read_input(file.string(), one, o1);
      Status sn = read_input(file.string(), many, on);
      ASSERT_EQ(describe(one, s1), describe(many, sn)) << file << " on " << threads << " threads";
      ++compared;
    }
    auto bytes = InputBuffer::open(file.string());
    if (bytes && is_ncu_raw(std::string(bytes->bytes())) && file.extension() == ".csv") {
      ++raw;
      const std::string expected = read_streamed(file.string(), 1, 1 << 20);
      for (std::size_t chunk : all_or_one({std::size_t{4096}, std::size_t{65536}}, raw)) {
        EXPECT_EQ(read_streamed(file.string(), 3, chunk), expected) << file << " streamed in " << chunk;
        EXPECT_EQ(read_streamed(file.string(), 3, chunk, FileAccess::kMapped), expected) << file << " mapped, " << chunk;
      }
      EXPECT_EQ(read_streamed(file.string(), 1, 4096, FileAccess::kMapped), expected) << file << " mapped, one thread";
    }
  }
  EXPECT_GT(compared, 50u);
  EXPECT_GT(raw, 5u);  // the raw pages were split, streamed and mapped too
}

// The files of KERNLENS_FUZZ_CORPUS=DIR, when set.
void add_fuzz_corpus(std::vector<std::string>& inputs) {
  const char* corpus = std::getenv("KERNLENS_FUZZ_CORPUS");
  if (!corpus || !*corpus) return;
  for (const auto& e : fs::recursive_directory_iterator(corpus)) {
    if (!e.is_regular_file()) continue;
    auto bytes = InputBuffer::open(e.path().string());
    if (bytes) inputs.emplace_back(bytes->bytes());
  }
}

TEST(ParallelRead, FuzzSeedsAndMutationsReadTheSameOnAnyNumberOfThreads) {
  std::vector<std::string> inputs;
  std::uint32_t seed = 22;
  for (const auto& file : fixture_files()) {
    auto bytes = InputBuffer::open(file.string());
    if (!bytes || !is_ncu_raw(std::string(bytes->bytes()))) continue;
    for (auto& m : seeds_and_mutations(std::string(bytes->bytes()), seed++)) inputs.push_back(std::move(m));
  }
  add_fuzz_corpus(inputs);
  ASSERT_GT(inputs.size(), 100u);
  std::size_t split = 0, sampled = 0;
  test::TempDir dir;
  const std::string path = dir.file("input.csv");
  std::size_t n = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!in_sample(i)) continue;
    ++sampled;
    const std::string& input = inputs[i];
    const std::string expected = read_bytes(input, 1);
    for (unsigned threads : {2u, 5u}) ASSERT_EQ(read_bytes(input, threads), expected) << input.substr(0, 300);
    split += split_csv_records(input, 5, 1).size() > 0;
    if (input.empty()) continue;  // no file to map or stream: read_input reads it whole
    // From a file, in small windows: mapped on several threads as on one, or (every other
    // input, for CI's time under ASan) streamed likewise (a quote never closed reads as a
    // record longer than the carry streamed, to the end mapped).
    dir.write("input.csv", input);
    const FileAccess access = n++ % 2 ? FileAccess::kStreamed : FileAccess::kMapped;
    ASSERT_EQ(read_streamed(path, 3, 4096, access), read_streamed(path, 1, 4096, access)) << input.substr(0, 300);
  }
  EXPECT_GT(split, sampled / 2);  // most were cut into parts
}

// A PyTorch profiler trace read in windows of `window` bytes (mapped where it is a plain file,
// or streamed through ChunkReader).
std::string read_trace_streamed(const std::string& path, unsigned threads, std::size_t window,
                                FileAccess access = FileAccess::kStreamed) {
  return read_streamed(path, model::InputFormat::kPytorchTrace, threads, [&](ReadContext& ctx) {
    return read_pytorch_trace_file(path, fs::file_size(path), ctx, window, access);
  });
}

bool is_pytorch_trace(const fs::path& file) {
  const std::string dir = file.parent_path().filename().string();
  return file.filename().string().ends_with(".json.gz") && (dir == "pytorch" || dir == "multirank");
}

// Every PyTorch trace fixture (the multi-rank ones too), whole in memory on 1, 2, 3 and 8
// threads, and streamed in windows small enough that cuts fall everywhere.
TEST(ParallelRead, PytorchTracesReadTheSameOnAnyNumberOfThreadsAndWindows) {
  std::size_t traces = 0;
  for (const auto& file : fixture_files()) {
    if (!is_pytorch_trace(file)) continue;
    ++traces;
    if (auto bytes = InputBuffer::open(file.string())) {  // not the truncated gzip: streamed only
      const std::string expected = read_bytes(bytes->bytes(), 1);
      EXPECT_NE(expected.find("launch '"), std::string::npos) << file;
      for (unsigned threads : all_or_one({2u, 3u, 8u}, traces)) {
        EXPECT_EQ(read_bytes(bytes->bytes(), threads), expected) << file << " on " << threads << " threads";
      }
      // Inflated into a plain file: mapped, in the windows streaming cuts (one that ends the
      // file exactly among them), the same as streamed.
      test::TempDir dir;
      dir.write("trace.json", std::string(bytes->bytes()));
      const std::string plain = dir.file("trace.json");
      for (std::size_t window : all_or_one({std::size_t{4096}, std::size_t{50000}, bytes->bytes().size()}, traces)) {
        const std::string streamed = read_trace_streamed(plain, 1, window);
        EXPECT_NE(streamed.find("launch '"), std::string::npos) << file;
        for (unsigned threads : all_or_one({1u, 3u}, traces / 3)) {
          EXPECT_EQ(read_trace_streamed(plain, threads, window, FileAccess::kMapped), streamed)
              << file << " mapped in windows of " << window << " on " << threads << " threads";
        }
      }
      // As `analyze` reads it: mapped, on several threads one window, its parts read on.
      for (unsigned threads : all_or_one({2u, 5u}, traces)) {
        const std::string whole = read_streamed(plain, model::InputFormat::kPytorchTrace, threads, [&](ReadContext& ctx) {
          return read_pytorch_trace_file(plain, fs::file_size(plain), ctx);
        });
        EXPECT_EQ(whole, read_trace_streamed(plain, 1, bytes->bytes().size())) << file << " on " << threads << " threads";
      }
    }
    for (std::size_t window : all_or_one({std::size_t{4096}, std::size_t{50000}}, traces)) {
      // One thread in the same windows: where the file is cut short, what was read before
      // the error depends on the window.
      const std::string streamed = read_trace_streamed(file.string(), 1, window);
      for (unsigned threads : all_or_one({2u, 3u}, traces / 2)) {
        EXPECT_EQ(read_trace_streamed(file.string(), threads, window), streamed)
            << file << " in windows of " << window << " on " << threads << " threads";
      }
    }
  }
  EXPECT_GE(traces, 11u);
}

// A trace of 40,000 launches: their calls are looked up in chunks of the launches on several
// threads, a cursor each; each launch gets its call's thread, process and CPU range as on one
// thread, where launches come out of their calls' order (two streams' kernels interleaved),
// calls are missing, calls come in two CPU threads and three processes, a range on a thread
// spans both chunks, and the track of the last process to launch is the trace's first.
TEST(ParallelRead, TraceLaunchesFindTheirCallsInChunksOnAnyNumberOfThreads) {
  std::string first_calls, events;
  events += R"({"ph": "X", "cat": "user_annotation", "name": "span", "pid": 5, "tid": 700, "ts": 15000, "dur": 370000},)";
  events += R"({"ph": "X", "cat": "user_annotation", "name": "late", "pid": 9, "tid": 900, "ts": 300000, "dur": 50000},)";
  for (int i = 0; i < 40000; ++i) {
    const int id = 100 + 2 * i;
    const int pid = i >= 25000 ? 9 : i >= 12000 && i < 13000 ? 6 : 5;
    const int tid = pid == 5 ? 700 + (i / 1000) % 2 : pid * 100;
    if (i % 97 != 0) {
      (pid == 9 ? first_calls : events) += fmt::format(
          R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {}, "tid": {}, "ts": {}, "dur": 3, "args": {{"correlation": {}}}}},)",
          pid, tid, 10 * i, id);
    }
    const int at = i % 2 ? i - 1 : i + 1;  // pairs swapped: ids out of order
    events += fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "k{}", "pid": 0, "tid": 7, "ts": {}, "dur": 4, "args": {{"device": 0, "stream": {}, "correlation": {}}}}},)",
                          i % 3, 10 * at + 5, 7 + i % 2, 100 + 2 * at);
  }
  events.pop_back();
  const std::string trace = "{\"traceEvents\": [" + first_calls + events + "]}";
  const std::string one = read_bytes(trace, 1);
  ASSERT_TRUE(one.starts_with("status ok")) << one.substr(0, 300);
  EXPECT_NE(one.find(" 701 "), std::string::npos);  // launches of the second CPU thread
  // The processes numbered as their first launches come, not as their tracks do.
  const std::size_t first6 = one.find("/6/ "), first9 = one.find("/9/ ");
  ASSERT_NE(first6, std::string::npos);
  ASSERT_NE(first9, std::string::npos);
  EXPECT_LT(std::stoi(one.substr(first6 + 4, 3)), std::stoi(one.substr(first9 + 4, 3)));
  EXPECT_NE(one.find("'span' "), std::string::npos);
  EXPECT_NE(one.find("'late' "), std::string::npos);
  // Compared whole, not diffed: gtest's diff of two 10 MB texts takes minutes.
  for (unsigned threads : {2u, 5u}) EXPECT_TRUE(read_bytes(trace, threads) == one) << threads << " threads";
}

// A mapped trace takes an event of any length, on one thread (its windows grow) as on several
// (one window); streamed, an event is held in the window's buffer, up to 16 MiB.
TEST(ParallelRead, MappedTraceTakesAnEventLongerThanTheStreamedLimit) {
  const std::string kernel = R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2})";
  const std::string trace = "{\"traceEvents\": [" + kernel + R"(, {"ph": "X", "cat": "cpu_op", "name": ")" +
                            std::string(20 << 20, 'x') + R"(", "ts": 1, "dur": 1}, )" + kernel + "]}";
  test::TempDir dir;
  dir.write("trace.json", trace);
  const std::string path = dir.file("trace.json");
  const std::string one = read_trace_streamed(path, 1, 1 << 20, FileAccess::kMapped);
  EXPECT_TRUE(one.starts_with("status ok")) << one.substr(0, 300);
  EXPECT_NE(one.find("launch 'k'", one.find("launch 'k'") + 1), std::string::npos) << one;  // both kernels
  for (unsigned threads : {1u, 3u}) {
    const std::string whole = read_streamed(path, model::InputFormat::kPytorchTrace, threads, [&](ReadContext& ctx) {
      return read_pytorch_trace_file(path, fs::file_size(path), ctx);
    });
    EXPECT_EQ(whole, one) << threads << " threads";
  }
  const std::string streamed = read_trace_streamed(path, 1, 1 << 20);
  EXPECT_NE(streamed.find("a record longer than 16777216 bytes"), std::string::npos) << streamed.substr(0, 300);
}

// A trace whose strings and args hold, now and then, what looks like the place between two
// events, so that some cuts fall inside them (and must be found out) and others do not; and
// pids given as strings.
std::string trace_with_false_cuts() {
  std::string events;
  for (int i = 0; i < 60; ++i) {
    const bool false_call = i % 7 == 3, false_kernel = i % 11 == 5;
    events += fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel{} {}", "pid": "Spans {}", )"
                          R"("tid": 7, "ts": {}.5, "dur": 1, "args": {{"correlation": {}{}}}}},)",
                          false_call ? " },{" : "", i, i * 5 % 3, 1000 + 10 * i, i,
                          false_call ? R"(, "x": [{}, {"a": "}, {"}])" : "");
    events += "\n";
    events += fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "k{}{}", "pid": 0, "tid": 7, "ts": {}, )"
                          R"("dur": 3.25, "args": {{"correlation": {}, "shared memory": {}, "grid": [1, 2, 3]}}}},)",
                          i % 5, false_kernel ? R"( \"},{\" )" : "", 2000 + 10 * i, i, i % 2 * 1024);
    events += fmt::format(R"({{"ph": "X", "cat": "user_annotation", "name": "stage{}", "pid": "Spans {}", "tid": 7, )"
                          R"("ts": {}, "dur": 9}},)",
                          i % 4, i * 5 % 3, 999 + 10 * i);
    events += "\n";
  }
  events += R"({"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "rank 0"}})";
  return R"({"deviceProperties": [{"id": 0, "name": "GPU"}, {"id": 1}], "traceEvents": [)" + events +
         R"(], "distributedInfo": {"rank": 0, "world_size": 2, "backend": "nccl"}})";
}

TEST(ParallelRead, TraceCutsInsideStringsAndNestedArraysAreFoundOut) {
  const std::string trace = trace_with_false_cuts();
  const std::string expected = read_bytes(trace, 1);
  ASSERT_NE(expected.find("status ok"), std::string::npos) << expected;
  ASSERT_NE(expected.find("stage 'stage1'"), std::string::npos) << expected;
  std::size_t some_false = 0, all_true = 0;
  const std::size_t events = trace.find('[') + 1;
  for (unsigned threads = 2; threads <= 40; ++threads) {
    ASSERT_EQ(read_bytes(trace, threads), expected) << threads << " threads";
    std::size_t false_cuts = 0;
    TraceEventCuts cuts(std::string_view(trace).substr(events), threads, 1);
    for (std::size_t cut; (cut = cuts.next()) != std::string_view::npos;) {
      false_cuts += trace.compare(events + cut, 5, "{\"ph\"") != 0;
    }
    (false_cuts > 0 ? some_false : all_true) += 1;
  }
  EXPECT_GT(some_false, 0u);  // some cuts fell inside a string or an array, and were found out
  EXPECT_GT(all_true, 0u);    // and other windows were read in parts and merged
}

// The kind of event the trace reader keeps that `event` is: the value of its first "cat" or
// "ph" that is one of those kinds, or empty. (A plain search: std::regex, at -O0 under the
// sanitizers, took most of the time of the test below.)
std::string_view kept_kind(std::string_view event) {
  static const std::set<std::string_view> kKinds = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver",
                                                    "user_annotation", "gpu_user_annotation", "ac2g", "M"};
  for (std::size_t at = 0; (at = event.find("\": \"", at)) != std::string_view::npos; at += 4) {
    const bool key = (at >= 4 && event.substr(at - 4, 4) == "\"cat") || (at >= 3 && event.substr(at - 3, 3) == "\"ph");
    const std::size_t end = event.find('"', at + 4);
    if (!key || end == std::string_view::npos) continue;
    if (kKinds.contains(event.substr(at + 4, end - at - 4))) return event.substr(at + 4, end - at - 4);
  }
  return {};
}

// A smaller document of a trace's own members and events: up to 100 of each kind the reader
// keeps (kernels, copies, runtime calls, ranges, flows, metadata), in their order. The whole
// document where the tokenizer cannot split it.
std::string sampled_trace(const std::string& doc) {
  TraceTokenizer tokens("sample.json");
  tokens.set_window(doc, true);
  std::string members, events;
  std::map<std::string_view, int> kept;
  while (true) {
    auto part = tokens.next();
    if (!part) return doc;
    if (!*part) break;
    const TracePart& t = **part;
    if (t.kind == TracePart::Kind::kMember) {
      members += fmt::format("\"{}\": {},\n", t.key, t.value);
      continue;
    }
    const std::string_view kind = kept_kind(t.value);
    if (kind.empty() || ++kept[kind] > 100) continue;
    events += (events.empty() ? "" : ",\n  ") + std::string(t.value);
  }
  return "{\n" + members + "\"traceEvents\": [\n  " + events + "\n  ]\n}\n";
}

// The fuzz seeds of a trace (scripts/fuzz.sh: its first 8 KB, its first 3 and 40 events as a
// whole document), a sample of it (sampled_trace), and mutations of the sample where cuts
// fall: braces, commas and quotes in strings, escapes, the array's end, truncation.
std::vector<std::string> trace_seeds_and_mutations(const std::string& doc, std::uint32_t seed) {
  auto first_events = [&](int n) {
    std::size_t at = doc.find("\"traceEvents\"");
    for (int i = 0; i < n && at != std::string::npos; ++i) at = doc.find("\n  }", at + 1);
    return at == std::string::npos ? doc.substr(0, 1 << 16) : doc.substr(0, at + 4) + "\n  ]\n}\n";
  };
  const std::string base = sampled_trace(doc);
  std::vector<std::string> out = {doc.substr(0, 8192), first_events(3), first_events(40), base};
  std::mt19937 rng(seed);
  auto at = [&](std::size_t size) { return std::uniform_int_distribution<std::size_t>(0, size)(rng); };
  for (int i = 0; i < 16; ++i) {
    std::string m = base;
    const std::size_t quote = m.find("\"name\": \"", at(m.size()));
    switch (i % 8) {
      case 0: if (quote != std::string::npos) m = with_inserted(m, quote + 9, "},\n  {"); break;  // an event's end, in a string
      case 1: m = with_inserted(m, at(m.size()), "\""); break;                                  // a stray quote
      case 2: m = with_inserted(m, at(m.size()), "},{"); break;                                  // braces out of place
      case 3: m.resize(at(m.size())); break;                                         // cut short
      case 4: if (quote != std::string::npos) m = with_inserted(m, quote + 9, "\\\"},{\\\\"); break;  // escapes
      case 5: m = with_inserted(m, at(m.size()), "]"); break;                                    // the array ended early
      case 6: if (!m.empty()) m[at(m.size() - 1)] = '{'; break;
      case 7: m = with_inserted(m, at(m.size()), "\n  },\n  {\"ph\": \"X\"}"); break;
    }
    out.push_back(std::move(m));
  }
  return out;
}

TEST(ParallelRead, TraceFuzzSeedsAndMutationsReadTheSameOnAnyNumberOfThreads) {
  std::vector<std::string> inputs;
  std::uint32_t seed = 22;
  for (const auto& file : fixture_files()) {
    if (!is_pytorch_trace(file)) continue;
    auto bytes = InputBuffer::open(file.string());
    if (!bytes) continue;  // the truncated gzip
    for (auto& m : trace_seeds_and_mutations(std::string(bytes->bytes()), seed++)) inputs.push_back(std::move(m));
  }
  const std::size_t seeds = inputs.size();
  ASSERT_GT(seeds, 150u);
  add_fuzz_corpus(inputs);
  std::size_t ok = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!in_sample(i)) continue;
    const std::string expected = read_bytes(inputs[i], 1);
    ok += i < seeds && expected.starts_with("status ok");
    for (unsigned threads : {3u, 7u}) ASSERT_EQ(read_bytes(inputs[i], threads), expected) << inputs[i].substr(0, 300);
  }
  const std::size_t sampled_seeds = kSampled ? (seeds + kSampleEvery - 1) / kSampleEvery : seeds;
  EXPECT_GT(ok, sampled_seeds / 4);  // many seeds and mutations still read, and read the same
  EXPECT_LT(ok, sampled_seeds);      // and some failed, with the same error
}

// The llama nsys fixture after `sql` (damage, gaps, odd names), as the bytes of its file.
std::string changed_export(const std::string& sql) {
  auto original = InputBuffer::open(test::fixture("nsys/llama_stages.sqlite"));
  EXPECT_TRUE(original);
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  const std::string_view bytes = original->bytes();
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size()));
  std::copy(bytes.begin(), bytes.end(), copy);
  sqlite3_deserialize(db, "main", copy, static_cast<sqlite3_int64>(bytes.size()),
                      static_cast<sqlite3_int64>(bytes.size()),
                      SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << (err ? err : "") << " in " << sql;
  sqlite3_free(err);
  sqlite3_int64 size = 0;
  unsigned char* data = sqlite3_serialize(db, "main", &size, 0);
  std::string out(reinterpret_cast<const char*>(data), static_cast<std::size_t>(size));
  sqlite3_free(data);
  sqlite3_close(db);
  return out;
}

// The kernel table is read in rowid ranges, one per thread, and merged: the names (with nsys's
// fallback from an empty demangled name, whose first name stands for the id), processes,
// devices, gaps in the rowids and the first bad row come out as one scan gives them, wherever
// the ranges are cut; so do the launch calls (CUPTI_ACTIVITY_KIND_RUNTIME), read in ranges too
// with 4 threads and more.
// The runtime table rewritten in start order (the fixture's rows come in two runs of time);
// and with one call recorded twice (a wrapper around it, adjacent).
const std::string kRuntimeByStart =
    "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME; INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM t "
    "ORDER BY start, end DESC; DROP TABLE t;";
const std::string kCallsInTimeOrder =
    "CREATE TABLE t AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME;" + kRuntimeByStart;
const std::string kCallsInTimeOrderOneTwice =
    "CREATE TABLE t AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL SELECT start - 1, end + 1, eventClass, "
    "globalTid, correlationId, nameId, returnValue, callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid = 1966;" +
    kRuntimeByStart;

TEST(ParallelRead, NsysKernelTableInRowidRangesReadsAsOneScan) {
  const std::string k = "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET ";
  // The change, and whether the export can still be read.
  const std::vector<std::pair<std::string, bool>> changes = {
      {"", true},
      {k + "start = 'abc' WHERE rowid = 4000", false},
      {k + "gridX = -1 WHERE rowid = 3000", false},
      {k + "demangledName = 9996, shortName = 9997, mangledName = NULL WHERE rowid = 2500", false},
      // The same row bad twice: the name is checked first; then the earlier of two bad rows.
      {k + "gridX = -1, demangledName = 9999, shortName = 9997, mangledName = NULL WHERE rowid = "
           "3000",
       false},
      {k + "gridX = -1 WHERE rowid = 3000;" + k +
           "demangledName = 9996, shortName = 9997 WHERE rowid = 3001",
       false},
      // An empty demangled name: the first short name found stands for the id from then on.
      {"INSERT INTO StringIds VALUES (9999, '');" + k +
           "demangledName = 9999, shortName = 1 WHERE rowid = 100;" + k +
           "demangledName = 9999, shortName = 3 WHERE rowid = 5000",
       true},
      {k + "demangledName = 9998, shortName = 1 WHERE rowid = 10;" + k +
           "demangledName = 9998, shortName = 9997, mangledName = NULL WHERE rowid = 5000",
       true},
      {k + "demangledName = 9998, shortName = 9997, mangledName = NULL WHERE rowid = 10;" + k +
           "demangledName = 9998, shortName = 1 WHERE rowid = 5000",
       false},
      // Gaps, another process and device, calls without a correlation id.
      {"DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid BETWEEN 2000 AND 2500 OR rowid = 1",
       true},
      {k + "globalPid = globalPid + (1 << 24), deviceId = 3 WHERE rowid > 4500;" + k +
           "correlationId = NULL WHERE rowid % 7 = 0",
       true},
      // The launch calls, read in ranges too: gaps, calls without ids, launches recorded twice.
      {"DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid BETWEEN 1000 AND 1500;"
       "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = NULL WHERE rowid % 5 = 0;"
       "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE "
       "rowid < 300",
       true},
      // The launch calls in key and time order (the fixture's come in two runs of time): kept
      // as they come, in one scan or (7 and 64 threads) in rowid ranges handed to one builder
      // in order, beside the kernels' ranges; with a launch recorded twice; with another
      // process's calls last.
      {kCallsInTimeOrder, true},
      {kCallsInTimeOrderOneTwice, true},
      {kCallsInTimeOrder + "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = globalTid + (1 << 24) WHERE rowid > 5000",
       true},
      // The NVTX ranges are read beside the kernel rows, on a connection of their own: their
      // error is the read's, before a bad kernel row's, as when they were read first.
      {"ALTER TABLE NVTX_EVENTS RENAME COLUMN globalTid TO tid", false},
      {"ALTER TABLE NVTX_EVENTS RENAME COLUMN globalTid TO tid;" + k + "gridX = -1 WHERE rowid = 3000", false},
      // Rowids too sparse for a slot each: one scan.
      {"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = 1000000000 WHERE rowid = 5592", true},
      {"DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid > 1", true},
      {"DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL", false},
  };
  std::size_t turn = 0;
  for (const auto& [sql, readable] : changes) {
    const std::string bytes = changed_export(sql);
    const std::string one = read_bytes(bytes, 1);
    EXPECT_EQ(one.rfind("status ok", 0) == 0, readable) << sql << "\n" << one.substr(0, 300);
    if (sql.starts_with("ALTER TABLE NVTX_EVENTS")) {
      EXPECT_TRUE(one.starts_with("status input.csv: table NVTX_EVENTS has no column 'globalTid'")) << one.substr(0, 300);
      EXPECT_EQ(one.find("launch '"), std::string::npos) << one.substr(0, 300);  // none kept
    }
    for (unsigned threads : all_or_one({2u, 3u, 7u, 64u}, turn++))
      EXPECT_EQ(read_bytes(bytes, threads), one) << sql << " on " << threads;
  }
}

// A damaged export found by fuzz_nsys_sqlite: a kernel row whose rowid repeats an earlier one
// out of order. One scan meets it and stops ("malformed"); a seek into a range skips it. The
// ranges are checked against the count of one scan's rows and the table read in one scan again.
TEST(ParallelRead, NsysDamagedRowidOrderReadsAsOneScan) {
  auto bytes = InputBuffer::open(test::fixture("../fuzz/regressions/nsys_sqlite_rowids_out_of_order.sqlite"));
  ASSERT_TRUE(bytes);
  const std::string input(bytes->bytes());
  const std::string one = read_bytes(input, 1);
  EXPECT_NE(one.find("malformed"), std::string::npos) << one.substr(0, 300);
  for (unsigned threads : {2u, 3u, 5u, 12u}) EXPECT_EQ(read_bytes(input, threads), one) << threads;
}

// The leaf pages of `table` in an export's bytes, in the order of their page numbers (SQLite's
// dbstat).
std::vector<std::size_t> leaf_pages(const std::string& bytes, const std::string& table) {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size()));
  std::copy(bytes.begin(), bytes.end(), copy);
  sqlite3_deserialize(db, "main", copy, static_cast<sqlite3_int64>(bytes.size()),
                      static_cast<sqlite3_int64>(bytes.size()), SQLITE_DESERIALIZE_FREEONCLOSE);
  sqlite3_stmt* stmt = nullptr;
  const std::string sql = "SELECT pageno FROM dbstat WHERE name = '" + table + "' AND pagetype = 'leaf' ORDER BY pageno";
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::vector<std::size_t> pages;
  while (stmt && sqlite3_step(stmt) == SQLITE_ROW) pages.push_back(static_cast<std::size_t>(sqlite3_column_int64(stmt, 0)));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return pages;
}

// Leaf pages of the kernel or the runtime table moved in the file: each page stays sound, but
// one scan walks rowids out of order and a seek lands on other rows; or a few bytes of a leaf
// page's cells overwritten. A read in rowid ranges, checked against the count of one scan's
// rows (the argument at rows_of_one_scan), reads as one scan does.
TEST(ParallelRead, NsysLeafPagesMovedOrDamagedReadAsOneScan) {
  const std::string original = changed_export("");
  constexpr std::size_t kPage = 4096;  // the fixture's page size
  std::mt19937 rng(2211);
  std::size_t turn = 0, cases = 0;
  for (const std::string table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME"}) {
    const std::vector<std::size_t> pages = leaf_pages(original, table);
    ASSERT_GT(pages.size(), 10u) << table;
    for (int k = 0; k < 16; ++k) {
      std::string bytes = original;
      const auto at = [&](std::size_t page) { return bytes.begin() + static_cast<std::ptrdiff_t>((page - 1) * kPage); };
      const std::size_t a = pages[rng() % pages.size()], b = pages[rng() % pages.size()];
      if (k % 2 == 0 && a != b) {
        std::swap_ranges(at(a), at(a) + kPage, at(b));  // two leaves trade places
      } else {
        for (int i = 0; i < 4; ++i) *(at(a) + static_cast<std::ptrdiff_t>(100 + rng() % (kPage - 100))) = static_cast<char>(rng());
      }
      const std::string one = read_bytes(bytes, 1);
      for (unsigned threads : all_or_one({2u, 3u, 7u}, turn++)) {
        EXPECT_EQ(read_bytes(bytes, threads), one) << table << ", case " << k << ", on " << threads;
      }
      ++cases;
    }
  }
  EXPECT_EQ(cases, 32u);
}

// Two neighbouring leaves of the kernel table traded in the file. A part's seek then lands
// among rows that go on past its range's end, or come back below rows it read: with the count
// of one scan unchanged, only the check that a part's rowids rise inside its range (RowidOrder)
// sees that. Without it, a part wrote more launches than its range has slots (into the next
// part's: other JSON, or a crash).
TEST(ParallelRead, NsysNeighbourLeavesTradedReadAsOneScan) {
  const std::string original = changed_export("");
  constexpr std::size_t kPage = 4096;  // the fixture's page size
  const std::vector<std::size_t> pages = leaf_pages(original, "CUPTI_ACTIVITY_KIND_KERNEL");
  ASSERT_GT(pages.size(), 17u);
  std::size_t turn = 0;
  for (std::size_t k = 0; k < 16; ++k) {
    std::string bytes = original;
    const auto at = [&](std::size_t page) { return bytes.begin() + static_cast<std::ptrdiff_t>((page - 1) * kPage); };
    std::swap_ranges(at(pages[k]), at(pages[k]) + kPage, at(pages[k + 1]));
    const std::string one = read_bytes(bytes, 1);
    for (unsigned threads : all_or_one({2u, 3u, 5u, 7u, 16u}, turn++)) {
      EXPECT_EQ(read_bytes(bytes, threads), one) << "leaves " << k << " and " << k + 1 << ", on " << threads;
    }
  }
}

// The rowid ranges cover the table in order; rowids far apart (a slot per rowid would cost
// more than the file) are read in one scan.
TEST(ParallelRead, NsysRowidRangesOnlyWhereTheRowidsAreDense) {
  auto ranges_of = [](const std::string& bytes, std::size_t slot_bytes) {
    model::Profile profile;
    ReadContext ctx{"llama.sqlite", profile, 0, nullptr, nullptr};
    auto db = SqliteDb::open_bytes(bytes);
    EXPECT_TRUE(db);
    nsys::Schema schema(*db, ctx);
    EXPECT_TRUE(schema.load());
    return schema.rowid_ranges(nsys::kKernels, 4, bytes.size(), slot_bytes);
  };
  const std::string dense = changed_export("");
  using Ranges = std::vector<std::pair<std::int64_t, std::int64_t>>;
  EXPECT_EQ(ranges_of(dense, 192), (Ranges{{1, 1399}, {1399, 2797}, {2797, 4195}, {4195, 5593}}));
  const std::string far_apart =
      changed_export("DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid BETWEEN 2 AND 5591");
  EXPECT_TRUE(ranges_of(far_apart, 192).empty());
  EXPECT_EQ(ranges_of(far_apart, 1).size(), 4u);  // slots of a byte: cheaper than counting rows
}

// --verbose on an export read in parts on 3 threads: the kernel rows' step lists the work
// beside the parts with the CPU its own threads spent (CpuTally), and the read is the same as
// one without the tallies. On one thread nothing is beside and nothing of that is listed.
TEST(ParallelRead, NsysVerboseListsTheWorkBesideTheKernelRowsWithItsThreadsCpu) {
  if (usable_cpus() < 2) GTEST_SKIP() << "one CPU: the NVTX ranges and calls are read after the rows, not beside";
  const std::string path = test::fixture("nsys/llama_stages.sqlite");
  auto read = [&](unsigned threads, StepTimes* times) {
    model::Profile profile;
    ReadOptions options;
    options.threads = threads;
    options.min_part_bytes = 1;
    options.step_times = times;
    Status s = read_input(path, profile, options);
    return describe(profile, s);
  };
  StepTimes times;
  const std::string timed = read(3, &times);
  EXPECT_EQ(timed, read(3, nullptr));
  ASSERT_TRUE(timed.starts_with("status ok")) << timed.substr(0, 200);
  std::map<std::string, StepTimes::Step> by_name;
  for (const StepTimes::Step& s : times.steps()) by_name[s.name] = s;
  const auto rows = std::find_if(times.steps().begin(), times.steps().end(),
                                 [](const StepTimes::Step& s) { return s.name.starts_with("kernel rows, "); });
  ASSERT_NE(rows, times.steps().end()) << times.text();
  for (const char* name : {"the parts, on 3 threads", "launch slots made (beside)", "launch pages faulted in (beside)",
                           "kernel rows counted (beside)"}) {
    ASSERT_TRUE(by_name.count(name)) << name << "\n" << times.text();
    EXPECT_EQ(by_name[name].depth, rows->depth + 1) << name;  // inside the kernel rows' step
    EXPECT_GE(by_name[name].cpu_ns, 0) << name;
    EXPECT_GT(by_name[name].wall_ns, 0) << name;
  }
  for (const char* name : {"NVTX ranges (beside)", "CUDA API calls (beside)", "CUDA API calls counted (beside)"}) {
    ASSERT_TRUE(by_name.count(name)) << name << "\n" << times.text();
    EXPECT_EQ(by_name[name].depth, rows->depth) << name;  // beside the rows, in the read
    EXPECT_GE(by_name[name].cpu_ns, 0) << name;
  }
  // The parts' threads spent CPU on 5,592 rows, all of it inside the kernel rows' step, whose
  // process CPU holds theirs.
  EXPECT_GT(by_name["the parts, on 3 threads"].cpu_ns, 0);
  EXPECT_LE(by_name["the parts, on 3 threads"].cpu_ns, rows->cpu_ns);
  StepTimes one;
  EXPECT_EQ(read(1, &one), timed);
  EXPECT_EQ(one.text().find("beside"), std::string::npos) << one.text();
  EXPECT_EQ(one.text().find("the parts"), std::string::npos) << one.text();
}

// Every page within the range is resident after prefault_in_parallel, on any number of
// threads, its bytes still zero; the range need not be page-aligned. The sizes give parts cut on
// page boundaries (under two huge pages each) and on huge-page ones.
TEST(PrefaultInParallel, FaultsInEveryPageOfTheRange) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  auto fresh = [](std::size_t bytes) {
    return static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  };
  const std::size_t offset = 100;
  for (const std::size_t bytes : {std::size_t{3 << 20} + 12345, std::size_t{9 << 20} + 12345, std::size_t{20 << 20} + 12345}) {
    for (unsigned threads : {1u, 3u, 16u}) {
      const std::size_t mapped = bytes + 2 * page;
      char* map = fresh(mapped);
      ASSERT_NE(map, MAP_FAILED);
      prefault_in_parallel(map + offset, bytes, threads);
      const std::size_t first = (offset + page - 1) / page, end = (offset + bytes) / page;  // whole pages inside
      std::vector<unsigned char> resident((mapped + page - 1) / page);  // a byte a page, the last one partly mapped
      ASSERT_EQ(mincore(map, mapped, resident.data()), 0);
      std::size_t in = 0;
      for (std::size_t p = first; p < end; ++p) in += resident[p] & 1;
      EXPECT_EQ(in, end - first) << bytes << " bytes on " << threads << " threads";
      EXPECT_TRUE(std::all_of(map, map + mapped, [](char c) { return c == 0; }));
      munmap(map, mapped);
    }
  }
}

// PrefaultInOrder: once wait_until(n) returns, every whole page of the range's first n bytes is
// resident, whatever is still being faulted beyond; after wait(), all of them, the bytes still
// zero. Ranges under two huge pages (one stretch), of many, not page-aligned, and empty.
TEST(PrefaultInOrder, TheFirstBytesAreFaultedInWhenWaitUntilReturns) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t offset = 100;
  auto resident_pages = [&](char* map, std::size_t from, std::size_t to) {  // whole pages in [from, to)
    const std::size_t first = (from + page - 1) / page, end = to / page;
    std::vector<unsigned char> resident(end > first ? end - first : 1);
    if (end <= first) return std::size_t{0};
    EXPECT_EQ(mincore(map + first * page, (end - first) * page, resident.data()), 0);
    std::size_t in = 0;
    for (unsigned char r : resident) in += r & 1;
    return in == end - first ? in : SIZE_MAX;
  };
  for (const std::size_t bytes : {std::size_t{3 << 20} + 12345, std::size_t{40 << 20} + 12345}) {
    for (unsigned threads : {1u, 3u, 16u}) {
      const std::size_t mapped = bytes + 2 * page;
      char* map = static_cast<char*>(mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      ASSERT_NE(map, MAP_FAILED);
      {
        PrefaultInOrder prefault(map + offset, bytes, threads);
        for (std::size_t n : {std::size_t{0}, page, bytes / 3, bytes / 2}) {
          prefault.wait_until(n);
          EXPECT_NE(resident_pages(map, offset, offset + n), SIZE_MAX) << n << " of " << bytes << " on " << threads;
        }
        prefault.wait();
        EXPECT_NE(resident_pages(map, offset, offset + bytes), SIZE_MAX) << bytes << " on " << threads;
        prefault.wait_until(2 * bytes);  // beyond the range: at once
      }
      EXPECT_TRUE(std::all_of(map, map + mapped, [](char c) { return c == 0; }));
      munmap(map, mapped);
    }
  }
  std::vector<char> small(100, 'x');  // no whole page: nothing to fault, nothing written
  PrefaultInOrder none(small.data() + 1, 50, 4);
  none.wait_until(50);
  none.wait();
  EXPECT_TRUE(std::all_of(small.begin(), small.end(), [](char c) { return c == 'x'; }));
}

// Dropped without a wait, it waits: nothing writes into memory freed after it.
TEST(PrefaultInOrder, TheDestructorWaitsForTheEnd) {
  const std::size_t bytes = std::size_t{64} << 20;
  char* map = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(map, MAP_FAILED);
  { PrefaultInOrder prefault(map, bytes, 2); }
  std::vector<unsigned char> resident(bytes / static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
  ASSERT_EQ(mincore(map, bytes, resident.data()), 0);
  EXPECT_TRUE(std::all_of(resident.begin(), resident.end(), [](unsigned char r) { return (r & 1) != 0; }));
  munmap(map, bytes);
}

// resize_prefaulted faults in only the room for the new elements: the prefault writes a byte a
// page, which would zero parts of the elements already there.
TEST(ResizePrefaulted, KeepsTheElementsThereAndValueInitialisesTheRest) {
  std::vector<std::uint32_t> v(10000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint32_t>(i) | 0x80000000U;
  resize_prefaulted(v, std::size_t{3} << 20, 4);
  ASSERT_EQ(v.size(), std::size_t{3} << 20);
  for (std::size_t i = 0; i < 10000; ++i) ASSERT_EQ(v[i], static_cast<std::uint32_t>(i) | 0x80000000U) << i;
  EXPECT_TRUE(std::all_of(v.begin() + 10000, v.end(), [](std::uint32_t x) { return x == 0; }));
}

// FaultedAppends: before each part is appended its room is resident, grown or reserved
// elsewhere in between, and every element appended stays in order.
TEST(FaultedAppends, TheRoomOfEachPartIsFaultedInAndTheElementsStay) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  auto resident_pages = [&](const std::uint64_t* from, std::size_t count) {  // the whole pages in the range
    const auto begin = (reinterpret_cast<std::uintptr_t>(from) + page - 1) & ~(page - 1);
    const auto end = reinterpret_cast<std::uintptr_t>(from + count) & ~(page - 1);
    if (end <= begin) return true;
    std::vector<unsigned char> in((end - begin) / page);
    EXPECT_EQ(mincore(reinterpret_cast<void*>(begin), end - begin, in.data()), 0);
    return std::all_of(in.begin(), in.end(), [](unsigned char c) { return c & 1; });
  };
  std::vector<std::uint64_t> v;
  FaultedAppends<std::uint64_t> room(v, 3);
  std::uint64_t next = 0;
  for (std::size_t part : {1000u, 70000u, 300000u, 5u, 1u << 20, 200000u, 600000u, 3000000u}) {
    if (part == 5) v.reserve(v.capacity() * 6);  // moved by someone else: faulted in from its end on
    room.make_room(part);
    ASSERT_GE(v.capacity(), v.size() + part);
    EXPECT_TRUE(resident_pages(v.data() + v.size(), part)) << part;
    for (std::size_t i = 0; i < part; ++i) v.push_back(next++);
  }
  ASSERT_EQ(v.size(), next);
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define KERNLENS_OWN_MALLOC 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define KERNLENS_OWN_MALLOC 1
#endif

// After return_large_blocks_when_freed, a large block that no free memory of the arenas can
// hold is a mapping of its own even once a larger one was freed (glibc would have raised its
// threshold to the freed block's size and grown the arena for the next, where it stays when
// freed), and is given back when freed.
TEST(ReturnLargeBlocksWhenFreed, ALargeBlockIsItsOwnMappingAfterALargerOneWasFreed) {
#if !defined(__GLIBC__) || defined(KERNLENS_OWN_MALLOC)
  GTEST_SKIP() << "glibc's malloc only (a sanitizer brings its own)";
#else
  return_large_blocks_when_freed();
  // Larger than all the arenas' free memory, so that malloc must ask the system for it, and
  // below glibc's highest dynamic threshold (32 MiB), so that the default would not map it.
  const std::size_t block = mallinfo2().fordblks + (std::size_t{1} << 20);
  if (block + (std::size_t{2} << 20) > (std::size_t{32} << 20)) GTEST_SKIP() << "the arenas hold too much free memory";
  static void* volatile kept;  // the allocations are not elided
  kept = std::malloc(block + (std::size_t{2} << 20));
  std::free(kept);
  const std::size_t mappings = mallinfo2().hblks;
  kept = std::malloc(block);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(mallinfo2().hblks, mappings + 1);
  std::free(kept);
  EXPECT_EQ(mallinfo2().hblks, mappings);  // given back when freed
#endif
}

TEST(GuessCsvRecordCuts, CutsAfterTheFirstLineBreakQuotedOrNot) {
  const std::string text = "\"a\",\"b\"\n\"multi\nline\",\"x\"\n\"c\",\"d\"\n\"e\",\"f\"\n";
  bool quoted_break_taken = false;
  for (std::size_t parts = 2; parts < 8; ++parts) {
    for (std::size_t cut : guess_csv_record_cuts(text, parts, 1)) {
      ASSERT_GT(cut, 0u);
      EXPECT_EQ(text[cut - 1], '\n');
      quoted_break_taken = quoted_break_taken || cut == text.find("line\"");
    }
  }
  EXPECT_TRUE(quoted_break_taken);  // a guess: split_csv_records never cuts there
  EXPECT_EQ(guess_csv_record_cuts(text, 2, 1), (std::vector<std::size_t>{text.find("\"c\"")}));
  EXPECT_TRUE(guess_csv_record_cuts(text, 4, text.size()).empty());  // parts would be too small
  EXPECT_TRUE(guess_csv_record_cuts(text, 1, 1).empty());
  EXPECT_TRUE(guess_csv_record_cuts("\"no line break\",\"at all\"", 2, 1).empty());
}

// A raw page whose NVTX ranges hold line breaks: the guessed cuts fall inside quoted fields,
// the reader finds it out and reads what one thread reads, whole or in windows.
// The cuts of `text` into 2 to 8 parts (guessed, or where the quotes allow) that fall just
// after one of its quoted line breaks ("de\n"): inside a record.
std::size_t cuts_inside_records(const std::string& text, bool guessed) {
  std::size_t inside = 0;
  for (unsigned parts = 2; parts < 9; ++parts) {
    for (std::size_t cut : guessed ? guess_csv_record_cuts(text, parts, 1) : split_csv_records(text, parts, 1)) {
      inside += text.compare(cut - 3, 3, "de\n") == 0;
    }
  }
  return inside;
}

// Guessed cuts inside quoted line breaks are found out (the part before stops short) and the
// rest cut again where the quotes allow; with a stray quote in a console line, those cuts
// fall inside records too, and the rest is read on one thread.
TEST(ParallelRead, RawPageWithLineBreaksInQuotedFieldsReadsTheSameOnAnyNumberOfThreads) {
  const std::string original = test::file_text(test::fixture("ncu/qwen_decode_raw.csv"));
  std::string text;
  std::size_t broken = 0, from = 0;
  for (std::size_t at; (at = original.find(":decode:", from)) != std::string::npos; from = at + 8, ++broken) {
    text.append(original, from, at - from);
    text += ":de\ncode:";
  }
  text.append(original, from);
  ASSERT_GT(broken, 100u);
  // The stray quote before the second launch's row.
  std::string stray = text;
  stray.insert(stray.find("\n\"1\",\"") + 1, "==PROF== a console line with a stray \" in it\n");
  ASSERT_GT(cuts_inside_records(text, true), 0u);  // the cases under test happen
  ASSERT_EQ(cuts_inside_records(text, false), 0u);
  ASSERT_GT(cuts_inside_records(stray, false), 0u);
  for (const std::string* input : {&text, &stray}) {
    const std::string expected = read_bytes(*input, 1);
    EXPECT_NE(expected.find("de\ncode"), std::string::npos);  // the stage name kept its line break
    for (unsigned threads : {2u, 3u, 5u, 8u}) EXPECT_EQ(read_bytes(*input, threads), expected) << threads << " threads";
    test::TempDir dir;
    const std::string path = dir.file("broken_ranges.csv");
    dir.write("broken_ranges.csv", *input);
    const std::string streamed = read_streamed(path, 1, 4096);
    for (std::size_t window : {std::size_t{4096}, std::size_t{65536}}) {
      EXPECT_EQ(read_streamed(path, 3, window, FileAccess::kMapped), streamed) << "mapped in windows of " << window;
      EXPECT_EQ(read_streamed(path, 4, window), streamed) << "streamed in windows of " << window;
    }
  }
}

TEST(SplitCsvRecords, CutsAfterALineBreakOutsideQuotes) {
  const std::string text = "\"a\",\"b\"\n\"multi\nline\",\"x\"\n\"c\",\"d\"\n\"e\",\"f\"\n";
  for (std::size_t parts = 2; parts < 8; ++parts) {
    for (std::size_t cut : split_csv_records(text, parts, 1)) {
      ASSERT_GT(cut, 0u);
      EXPECT_EQ(text[cut - 1], '\n');
      EXPECT_NE(cut, text.find("line\""));  // never inside the quoted line break
    }
  }
  EXPECT_TRUE(split_csv_records(text, 4, text.size()).empty());  // parts would be too small
  EXPECT_TRUE(split_csv_records(text, 1, 1).empty());
}

}  // namespace
}  // namespace kernlens::ingest
