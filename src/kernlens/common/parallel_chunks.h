// Splitting text into parts at record boundaries and parsing the parts on several threads:
// the shared machinery of the readers' --threads. Each reader parses a part into tables of its
// own and merges them in order, so the result is the one a single thread gives.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kernlens {

// What each thread writes at every item is kept apart from its neighbours' state: per-thread
// state held side by side in one vector is declared alignas(kThreadStateAlign). Without it a
// thread writing its own element's counters keeps taking the cache line its neighbour reads
// from under it (a million launches' rows took 2.5 times the CPU on 16 threads). 128 bytes:
// x86 cores fetch cache lines in pairs.
inline constexpr std::size_t kThreadStateAlign = 128;

// The CPUs this process may run on (its affinity, as `taskset` sets it), at least 1.
unsigned usable_cpus();

// The threads a reader uses: kernlens --threads N where given (set_default_threads), else
// usable_cpus().
unsigned default_threads();
void set_default_threads(unsigned threads);  // 0: back to usable_cpus()

// Runs work(0) .. work(n - 1), work(0) on the calling thread and each other on a thread of its
// own, all at once; returns when all have returned. `work` must not throw. The threads are
// kept, parked, for later calls (a forked child starts its own).
void run_parallel(std::size_t n, const std::function<void(std::size_t)>& work);

// Cuts [0, items) into `chunks` stretches of about equal size, in order, and runs
// work(chunk, begin, end) for each, on as many threads as chunks (run_in_chunks_on).
void run_in_chunks(std::size_t items, std::size_t chunks,
                   const std::function<void(std::size_t chunk, std::size_t begin, std::size_t end)>& work);
// The same stretches on up to `threads` threads, each thread taking the next stretch not yet
// taken: with a few stretches a thread, a thread whose stretches cost less, or whose CPU other
// work shares, takes more of them, where one stretch a thread left CPUs idle while the last
// ones ended.
void run_in_chunks_on(std::size_t items, std::size_t chunks, std::size_t threads,
                      const std::function<void(std::size_t chunk, std::size_t begin, std::size_t end)>& work);
// How many stretches run_in_chunks_on cuts `items` into for `threads` threads: one for every
// `least` items, up to four a thread (enough for a thread to take another where its CPU was
// shared), and one on one thread (nothing to even out, and every stretch costs a merge).
std::size_t stretches_for_threads(std::size_t items, std::size_t least, unsigned threads);

// Whether `items` are sorted by `less` (std::is_sorted), checked in stretches on up to
// `threads` threads, each with the first item of the next: a serial check of a trace's CUDA
// calls (150,000 in 200 MB) took 3-9 ms of the 7-12 ms of linking its launches on 2 vCPUs.
template <class T, class Less>
bool is_sorted_in_parallel(const std::vector<T>& items, Less less, unsigned threads) {
  constexpr std::size_t kLeastPerThread = 16384;
  const std::size_t parts = std::clamp<std::size_t>(items.size() / kLeastPerThread, 1, std::max(threads, 1u));
  std::vector<char> sorted(parts, 1);
  run_in_chunks(items.size(), parts, [&](std::size_t part, std::size_t begin, std::size_t end) {
    const auto first = items.begin() + static_cast<std::ptrdiff_t>(begin);
    const auto last = items.begin() + static_cast<std::ptrdiff_t>(std::min(end + 1, items.size()));
    sorted[part] = std::is_sorted(first, last, less);
  });
  return std::all_of(sorted.begin(), sorted.end(), [](char s) { return s != 0; });
}

// Sorts `items` by `less` (a strict weak order) as std::sort does where no two items are
// equivalent, on up to `threads` threads: stretches sorted each on a thread, then
// merged in pairs, the pairs of a round side by side. With equivalent items their order may
// differ from std::sort's: give `less` a total order.
template <class T, class Less>
void sort_in_parallel(std::vector<T>& items, Less less, unsigned threads) {
  constexpr std::size_t kLeastPerThread = 16384;
  const std::size_t parts = std::clamp<std::size_t>(items.size() / kLeastPerThread, 1, std::max(threads, 1u));
  std::vector<std::size_t> bounds(parts + 1);
  for (std::size_t p = 0; p <= parts; ++p) bounds[p] = items.size() * p / parts;
  auto at = [&](std::size_t i) { return items.begin() + static_cast<std::ptrdiff_t>(i); };
  run_parallel(parts, [&](std::size_t p) { std::sort(at(bounds[p]), at(bounds[p + 1]), less); });
  for (std::size_t width = 1; width < parts; width *= 2) {  // merge stretch p with p + width
    const std::size_t pairs = (parts + 2 * width - 1) / (2 * width);
    run_parallel(pairs, [&](std::size_t k) {
      const std::size_t first = 2 * width * k, middle = std::min(parts, first + width), last = std::min(parts, first + 2 * width);
      if (middle < last) std::inplace_merge(at(bounds[first]), at(bounds[middle]), at(bounds[last]), less);
    });
  }
}

// Numbers for the distinct keys of items 0 .. n - 1 in the order they first come (the first
// item's key is 0, the next new key 1, ...), worked out in stretches on up to `threads` threads:
// each stretch numbers its own keys, then the stretches' numbers are merged in order, so the
// numbers are those of one pass over the items. key_of(i, key) sets `key` to item i's key (one
// Key a thread, reused: a vector's room stays). A serial pass took 45 ms of one thread for the
// 430,000 NVTX paths of an 8 M kernels' export, while 15 CPUs waited.
struct FirstComeIds {
  std::vector<std::uint32_t> of_item;   // by item: its key's number
  std::vector<std::size_t> first_item;  // by number: the first item with that key
};
template <class Key, class Hash = std::hash<Key>, class Equal = std::equal_to<Key>, class KeyOf>
FirstComeIds number_first_come_in_parallel(std::size_t n, unsigned threads, KeyOf key_of) {
  constexpr std::size_t kLeastPerThread = 4096;
  using Numbers = std::unordered_map<Key, std::uint32_t, Hash, Equal>;
  struct alignas(kThreadStateAlign) Stretch {
    Numbers numbers;
    std::vector<Key> keys;            // by the stretch's number
    std::vector<std::size_t> first;   // by the stretch's number: its first item
    std::vector<std::uint32_t> ours;  // by the stretch's number: the merged number
  };
  const std::size_t parts = std::clamp<std::size_t>(n / kLeastPerThread, 1, std::max(threads, 1u));
  std::vector<Stretch> stretches(parts);
  FirstComeIds out;
  out.of_item.resize(n);
  run_in_chunks(n, parts, [&](std::size_t p, std::size_t begin, std::size_t end) {
    Stretch& s = stretches[p];
    Key key{};
    for (std::size_t i = begin; i < end; ++i) {
      key_of(i, key);
      auto [it, is_new] = s.numbers.try_emplace(key, static_cast<std::uint32_t>(s.keys.size()));
      if (is_new) {
        s.keys.push_back(key);
        s.first.push_back(i);
      }
      out.of_item[i] = it->second;
    }
  });
  if (parts == 1) {  // one stretch's numbers are already those of one pass
    out.first_item = std::move(stretches[0].first);
    return out;
  }
  Numbers merged;
  for (Stretch& s : stretches) {
    for (std::size_t k = 0; k < s.keys.size(); ++k) {
      auto [it, is_new] = merged.try_emplace(std::move(s.keys[k]), static_cast<std::uint32_t>(out.first_item.size()));
      if (is_new) out.first_item.push_back(s.first[k]);
      s.ours.push_back(it->second);
    }
  }
  run_in_chunks(n, parts, [&](std::size_t p, std::size_t begin, std::size_t end) {
    const std::vector<std::uint32_t>& ours = stretches[p].ours;
    for (std::size_t i = begin; i < end; ++i) out.of_item[i] = ours[out.of_item[i]];
  });
  return out;
}

// Runs first() and second() at once, second() on a thread of its own, where default_threads()
// is more than one; else one after the other. Neither may throw.
void run_side_by_side(const std::function<void()>& first, const std::function<void()>& second);

// Threads that one piece of parallel work hands to another as each runs out of work: the
// taker's k-th thread starts once k were handed over, or once all were (release_all, also where
// the giver stops early). Shared by both sides, e.g. through a std::shared_ptr.
class ThreadHandover {
 public:
  void release_one() {
    freed_.fetch_add(1, std::memory_order_release);
    freed_.notify_all();
  }
  void release_all() {
    freed_.store(kAll, std::memory_order_release);
    freed_.notify_all();
  }
  // Returns once `count` threads were handed over.
  void wait_for(std::size_t count) const {
    for (std::size_t f; (f = freed_.load(std::memory_order_acquire)) < count;) freed_.wait(f, std::memory_order_acquire);
  }

 private:
  static constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max() / 2;  // release_one after it stays above any count
  std::atomic<std::size_t> freed_{0};
};

// Parses parts 0, 1, ... on up to `threads` threads (the calling one among them) and merges
// them in order, each as soon as it and those before it are parsed, while the other threads
// parse on: no thread waits at a barrier between batches of parts. has_part(i, slot) says
// whether there is a part i, asked in order until it says no, before parse(i, slot), never
// two at once: there the caller may work out where part i lies and note it in `slot` (i %
// slots). At most `slots` parts are parsed and not yet merged, so what is held stays bounded.
// merge(i, slot) runs on whichever thread finished the part that made it possible, never two
// at once, and returns false to stop: no later part is merged, none not yet begun is parsed,
// and that slot is not reused. Returns the number of parts merged. None of the functions may
// throw. `join(thread)`, where given, runs on each thread (0 .. threads - 1) before it takes a
// part: a thread may wait there to join the others later.
std::size_t run_ordered_parts(unsigned threads, std::size_t slots,
                              const std::function<bool(std::size_t part, std::size_t slot)>& has_part,
                              const std::function<void(std::size_t part, std::size_t slot)>& parse,
                              const std::function<bool(std::size_t part, std::size_t slot)>& merge,
                              const std::function<void(std::size_t thread)>& join = {});

// Where to cut CSV text that starts at a record boundary into up to `parts` parts of about
// equal size, none smaller than `min_bytes`: the offsets where parts 1.. start (part 0 starts
// at 0), each just after a line break outside quotes. The quote state is the parity of the
// quotes before a point (RFC 4180: an escaped quote is doubled, so it flips the state twice),
// the rule the CSV scanner follows, counted on a thread per part; a reader still checks that each part ends where the next
// begins and parses the whole on one thread when not (a stray quote in a console line).
std::vector<std::size_t> split_csv_records(std::string_view text, std::size_t parts, std::size_t min_bytes);

// The same cuts guessed without a look at the quotes: each just after the first line break at
// or after k x size / parts. Counting the quotes is a pass over the text before the parse (a
// sixth of reading a raw page on two threads), and a line break inside a quoted field is rare;
// where a guess takes one, the reader finds a part that does not end where the next begins
// and cuts again with split_csv_records.
std::vector<std::size_t> guess_csv_record_cuts(std::string_view text, std::size_t parts, std::size_t min_bytes);

// The same cuts one at a time, as a reader comes to each part: a cut looks at the text where
// it falls, and cutting a mapped file's whole text before its first part touched it every few
// megabytes at once (its page cache mapped in large folios: most of a gigabyte in the
// process's RSS from the start).
class GuessedCsvRecordCuts {
 public:
  GuessedCsvRecordCuts(std::string_view text, std::size_t parts, std::size_t min_bytes);
  // The next cut; nullopt once there is none (then never again).
  std::optional<std::size_t> next();

 private:
  std::string_view text_;
  std::size_t parts_, min_bytes_, target_;
  std::size_t k_ = 1, from_ = 0;
};

}  // namespace kernlens
