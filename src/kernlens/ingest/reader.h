// Reading inputs into a Profile. One reader per format, all with the same signature; the
// format is detected from content (registry.h). Readers append launches, devices and stages
// to the profile and report problems as Errors carrying FILE:LINE.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/common/parallel_chunks.h"
#include "kernlens/model/profile.h"

namespace kernlens {
class StepTimes;
}

namespace kernlens::ingest {

// What to read besides each launch's own fields (name, ids, dimensions, duration,
// registers, shared memory, stage) and the device's properties, which are always read.
struct ReadOptions {
  // Every metric column (the default), or only the metrics named in `metrics`. A wide ncu
  // raw page is read several times faster when few are wanted: the others are not decoded.
  bool all_metrics = true;
  std::vector<std::string> metrics;
  // Threads a reader that splits its input may use (ncu raw page, PyTorch trace, nsys SQLite):
  // 0 for default_threads() (common/parallel_chunks.h). The result is the same whatever the number.
  unsigned threads = 0;
  // No thread gets a part smaller than this: a thread costs more than a few rows (tests set
  // it small to split small fixtures).
  std::size_t min_part_bytes = 1 << 20;
  // Where a reader's own steps are timed (--verbose: where the time went), or null; not owned.
  StepTimes* step_times = nullptr;

  bool wants_metric(std::string_view name) const;
  unsigned thread_count() const { return threads ? threads : default_threads(); }
};

// How a reader with a choice gets a plain file's bytes: mapped, parsed where they lie
// (common/file.h FileMapping), or streamed through a bounded buffer (common/chunk_reader.h);
// kMapped falls back to streaming where the file cannot be mapped or is gzip. The result is the same.
enum class FileAccess { kMapped, kStreamed };

// What a reader needs besides the bytes: where to put results and how to report.
struct ReadContext {
  std::string path;  // as the user gave it, for messages
  model::Profile& profile;
  std::uint32_t input_index = 0;
  // Called now and then with the number of bytes consumed (for a progress bar).
  std::function<void(std::uint64_t)> progress;
  const ReadOptions* options = nullptr;  // null: the defaults

  bool wants_metric(std::string_view name) const { return !options || options->wants_metric(name); }
  StepTimes* step_times() const { return options ? options->step_times : nullptr; }
  unsigned threads() const { return options ? options->thread_count() : default_threads(); }

  Error error(std::int64_t line, std::string message) const {
    return make_error(path, line, std::move(message));
  }
  void warn(std::int64_t line, std::string message) {
    profile.inputs[input_index].warnings.push_back(error(line, std::move(message)));
  }
};

// Text that is almost a format (an export missing its key column, another report of the same
// tool): what it looks like, at `line` when there is one, and whether the formats kernlens
// reads are worth listing after it.
struct NearMiss {
  std::string why;
  std::int64_t line = 0;
  bool list_formats = false;
};

using ReadFn = Status (*)(std::string_view bytes, ReadContext& ctx);
// A reader that can stream a large file instead of holding it whole.
using ReadFileFn = Status (*)(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx);

// Reads one input file (any supported format) into `profile`, recording it in
// profile.inputs. On error the profile may hold part of the input; callers stop.
Status read_input(const std::string& path, model::Profile& profile, const ReadOptions& options = {});

// The same on bytes already in memory (tests, fuzzers); `path` is used in messages.
Status read_input_bytes(std::string_view bytes, const std::string& path, model::Profile& profile,
                        const ReadOptions& options = {});

}  // namespace kernlens::ingest
