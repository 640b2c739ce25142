#include "kernlens/ingest/reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "kernlens/common/file.h"
#include "kernlens/common/gzip.h"
#include "kernlens/common/progress.h"
#include "kernlens/common/sqlite_db.h"
#include "kernlens/common/text.h"
#include "kernlens/ingest/registry.h"

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
// Counted in chunks on the read's threads (one pass over a million launches was ~3 ms of a
// 16-thread read's serial end).
void warn_untimed(const model::Profile& profile, std::uint32_t index, ReadContext& ctx) {
  const std::size_t n = profile.launches.size(), chunks = std::clamp<std::size_t>(n / 65536, 1, ctx.threads());
  std::vector<std::pair<std::size_t, std::size_t>> counts(chunks);  // timed, untimed
  run_in_chunks(n, chunks, [&](std::size_t c, std::size_t begin, std::size_t end) {
    std::size_t timed = 0, untimed = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const model::Launch& l = profile.launches[i];
      if (l.input == index) ++(l.duration_ns ? timed : untimed);
    }
    counts[c] = {timed, untimed};
  });
  std::size_t timed = 0, untimed = 0;
  for (const auto& [t, u] : counts) {
    timed += t;
    untimed += u;
  }
  if (timed > 0 && untimed > 0) {
    ctx.warn(0, std::to_string(untimed) + " of " + std::to_string(timed + untimed) +
                    " launches have no duration in the export: they count as launches but add no time");
  }
}

// Records the input, then runs `read` with a context and a progress bar over `bytes` bytes.
template <class ReadWith>
Status run_reader(const std::string& path, model::Profile& profile, const ReadOptions& options,
                  const FormatEntry& format, std::uint64_t bytes, ReadWith read) {
  auto index = static_cast<std::uint32_t>(profile.inputs.size());
  profile.inputs.push_back(model::InputInfo{path, format.id, std::string(format.description), {}, {}});
  ProgressBar bar("reading " + path, bytes);
  ReadContext ctx{path, profile, index, [&bar](std::uint64_t done) { bar.update(done); }, &options};
  const std::size_t first_range = profile.stage_ranges.size();
  Status status = read(ctx);
  bar.finish();
  for (std::size_t r = first_range; r < profile.stage_ranges.size(); ++r) profile.stage_ranges[r].input = index;
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
  Detection detected = guess_format(bytes);
  if (!detected.format) {
    profile.inputs.push_back(model::InputInfo{path, model::InputFormat::kUnknown, "", {}, {}});
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
Result<const FormatEntry*> streamed_format(const std::string& path, std::uint64_t size) {
  const bool from_file = size >= kStreamFrom || sqlite_has_pending_wal(path);
  // A large file's first megabyte (a raw page's header row can be that long) is looked at where
  // the file is mapped: read into a buffer grown to it, it took 1.3 ms of the serial start.
  const std::optional<FileMapping> mapped = from_file ? FileMapping::open(path) : std::nullopt;
  std::string read;  // the head, where the file is small or cannot be mapped
  if (!mapped) {
    auto head = read_file_head(path, from_file ? kDetectBytes : 2);
    if (!head) return head.error();
    read = std::move(head).value();
  }
  const std::string_view head = mapped ? mapped->bytes().substr(0, kDetectBytes) : std::string_view(read);
  if (is_gzip(head)) {
    auto inflated = read_gzip_head(path, kDetectBytes);
    if (!inflated) return nullptr;  // read whole, which reports the problem
    const FormatEntry* format = guess_format(*inflated).format;
    return format && format->read_file && format->read_file_inflates ? format : nullptr;
  }
  if (!from_file) return nullptr;
  const FormatEntry* format = guess_format(head).format;
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

}  // namespace kernlens::ingest
