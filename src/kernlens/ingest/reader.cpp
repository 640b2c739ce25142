#include "kernlens/ingest/reader.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <sys/stat.h>

#include "kernlens/common/file.h"
#include "kernlens/common/gzip.h"
#include "kernlens/common/progress.h"
#include "kernlens/common/text.h"
#include "kernlens/ingest/detect.h"
#include "kernlens/ingest/sqlite_db.h"

namespace kernlens::ingest {

bool ReadOptions::wants_metric(std::string_view name) const {
  if (all_metrics) return true;
  for (const auto& m : metrics) {
    if (m == name) return true;
  }
  return false;
}

namespace {

// From this size a plain file whose format can stream is not held whole.
constexpr std::uint64_t kStreamFrom = 32 << 20;
constexpr std::size_t kDetectBytes = 1 << 20;

// Launches an export lists without a time ("n/a") count as launches but add no time: said,
// with their number, when others of the same input have one (an export that measured no time
// at all says so in every output already).
void warn_untimed(const model::Profile& profile, std::uint32_t index, ReadContext& ctx) {
  std::size_t timed = 0, untimed = 0;
  for (const auto& l : profile.launches) {
    if (l.input == index) ++(l.duration_ns ? timed : untimed);
  }
  if (timed > 0 && untimed > 0) {
    ctx.warn(0, std::to_string(untimed) + " of " + std::to_string(timed + untimed) +
                    " launches have no duration in the export: they count as launches but add no time");
  }
}

// Records the input, then runs `read` with a context and a progress bar over `bytes` bytes.
template <class ReadWith>
Status run_reader(const std::string& path, model::Profile& profile, const ReadOptions& options,
                  const FormatInfo& format, std::uint64_t bytes, ReadWith read) {
  auto index = static_cast<std::uint32_t>(profile.inputs.size());
  profile.inputs.push_back(model::InputInfo{path, std::string(format.id), {}});
  ProgressBar bar("reading " + path, bytes);
  ReadContext ctx{path, profile, index, [&bar](std::uint64_t done) { bar.update(done); }, &options};
  Status status = read(ctx);
  bar.finish();
  // Where text enters kernlens, it becomes valid UTF-8 (common/text.h), and says so.
  if (std::size_t repaired = profile.rewrite_text(repaired_utf8)) {
    ctx.warn(0, std::to_string(repaired) + " names or labels are not valid UTF-8: each bad byte sequence "
                "reads as U+FFFD");
  }
  if (status) warn_untimed(profile, index, ctx);
  return status;
}

}  // namespace

Status read_input_bytes(std::string_view bytes, const std::string& path, model::Profile& profile,
                        const ReadOptions& options) {
  Detection detected = detect_format(bytes);
  if (!detected.format) {
    profile.inputs.push_back(model::InputInfo{path, "", {}});
    return make_error(path, detected.line,
                      detected.line ? detected.why : "unrecognised format: " + detected.why);
  }
  return run_reader(path, profile, options, *detected.format, bytes.size(),
                    [&](ReadContext& ctx) { return detected.format->read(bytes, ctx); });
}

namespace {

// The format of a file that is streamed rather than read whole: a large plain file of a
// format that streams, or a gzip file of one that streams inflating. Null otherwise. An
// SQLite file with a write-ahead log beside it is read from the file, however small: only
// SQLite reading the file itself sees the log.
Result<const FormatInfo*> streamed_format(const std::string& path, std::uint64_t size) {
  const bool from_file = size >= kStreamFrom || sqlite_has_pending_wal(path);
  auto head = read_file_head(path, from_file ? kDetectBytes : 2);
  if (!head) return head.error();
  if (is_gzip(*head)) {
    auto inflated = read_gzip_head(path, kDetectBytes);
    if (!inflated) return nullptr;  // read whole, which reports the problem
    const FormatInfo* format = detect_format(*inflated).format;
    return format && format->read_file && format->read_file_inflates ? format : nullptr;
  }
  if (!from_file) return nullptr;
  const FormatInfo* format = detect_format(*head).format;
  return format && format->read_file ? format : nullptr;
}

}  // namespace

Status read_input(const std::string& path, model::Profile& profile, const ReadOptions& options) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    const auto size = static_cast<std::uint64_t>(st.st_size);
    auto format = streamed_format(path, size);
    if (!format) return format.error();
    if (*format) {
      return run_reader(path, profile, options, **format, size,
                        [&](ReadContext& ctx) { return (*format)->read_file(path, size, ctx); });
    }
  }
  auto buffer = InputBuffer::open(path);
  if (!buffer) return buffer.error();
  return read_input_bytes(buffer->bytes(), path, profile, options);
}

namespace {

bool is_launch_level(std::string_view format) {
  return format == "ncu-raw-csv" || format == "ncu-details-csv";
}

// Moves what `from` knows and `into` lacks (same launch seen through another page).
void merge_launch(model::Profile& profile, model::Launch& into, model::Launch& from) {
  for (std::uint32_t i = 0; i < from.metrics_count; ++i) {
    model::MetricSample m = profile.metric_samples[from.metrics_first + i];
    if (!profile.find_metric(into, m.id)) profile.add_metric(into, m);
  }
  for (auto& r : from.rules) into.rules.push_back(std::move(r));
  if (!into.duration_ns) into.duration_ns = from.duration_ns;
  if (into.registers_per_thread < 0) into.registers_per_thread = from.registers_per_thread;
  if (into.static_shared_bytes < 0) into.static_shared_bytes = from.static_shared_bytes;
  if (into.dynamic_shared_bytes < 0) into.dynamic_shared_bytes = from.dynamic_shared_bytes;
}

}  // namespace

namespace {

struct LaunchKey {
  std::uint32_t process;
  std::int64_t id;
  model::NameId name;
  bool operator==(const LaunchKey&) const = default;
};

struct LaunchKeyHash {
  std::size_t operator()(const LaunchKey& k) const {
    return std::hash<std::int64_t>{}(k.id) * 31 + (std::size_t{k.process} << 32 ^ k.name);
  }
};

}  // namespace

void reconcile_inputs(model::Profile& profile) {
  if (profile.inputs.size() < 2) return;  // one input never holds a launch twice
  auto format_of = [&](const model::Launch& l) -> std::string_view {
    return profile.inputs[l.input].format;
  };
  // 1. The same launch (process, ID, name) read from two pages of different formats.
  std::unordered_map<LaunchKey, std::size_t, LaunchKeyHash> first_seen;
  std::vector<bool> drop(profile.launches.size(), false);
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    model::Launch& l = profile.launches[i];
    if (!is_launch_level(format_of(l)) || l.id == model::kUnknown || l.process == 0) continue;
    auto [it, is_new] = first_seen.try_emplace(LaunchKey{l.process, l.id, l.name}, i);
    if (is_new) continue;
    model::Launch& kept = profile.launches[it->second];
    if (format_of(kept) == format_of(l)) continue;  // two reports of one format: both count
    // Keep the raw page's record: its numbers carry full precision.
    if (format_of(l) == "ncu-raw-csv") std::swap(kept, l);
    merge_launch(profile, kept, l);
    drop[i] = true;
  }
  // 2. Summary rows of a process whose launches another input already holds.
  std::map<std::uint32_t, std::uint32_t> process_input;  // process -> launch-level input
  for (const auto& l : profile.launches) {
    if (is_launch_level(format_of(l)) && l.process != 0) process_input.emplace(l.process, l.input);
  }
  std::map<std::uint32_t, std::pair<std::size_t, std::uint32_t>> dropped_groups;  // input -> n, other
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    const model::Launch& l = profile.launches[i];
    if (format_of(l) != "ncu-summary-csv" || l.process == 0) continue;
    auto it = process_input.find(l.process);
    if (it == process_input.end()) continue;
    drop[i] = true;
    auto& entry = dropped_groups[l.input];
    ++entry.first;
    entry.second = it->second;
  }
  for (const auto& [input, entry] : dropped_groups) {
    profile.inputs[input].warnings.push_back(make_error(
        profile.inputs[input].path, 0,
        std::to_string(entry.first) + " kernel groups summarise launches already read from " +
            profile.inputs[entry.second].path + "; they are not counted twice"));
  }
  std::size_t out = 0;
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    if (drop[i]) continue;
    if (out != i) profile.launches[out] = std::move(profile.launches[i]);
    ++out;
  }
  profile.launches.resize(out);
}

}  // namespace kernlens::ingest
