// gzip inflation in steps: whole inputs (InputBuffer) and files streamed through a bounded
// window (open_gzip_reader), with the same errors for a truncated or corrupt file. Inflated by
// ISA-L's igzip (Debian's libisal-dev), about three times as fast as zlib here and streaming,
// unlike libdeflate (BENCHMARKS.md, "Inflating gzip").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kernlens/common/chunk_reader.h"
#include "kernlens/common/error.h"

struct inflate_state;

namespace kernlens {

// gzip data that inflates more than this many times its compressed size, past the first
// kGzipRatioFrom bytes, is refused: real exports compress 10 to 40 times; a run of one byte
// (a decompression bomb) 229 times at gzip -1, 1029 times at -6 and above.
inline constexpr std::uint64_t kMaxGzipRatio = 200;
inline constexpr std::uint64_t kGzipRatioFrom = 64 << 20;

// One inflating stream over a gzip file, concatenated members included. Errors name the line of
// the inflated text where they happen and the compressed byte offset.
class Inflater {
 public:
  explicit Inflater(std::string path);
  ~Inflater();
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Inflates from the front of `in` (advancing it) into out[0, out_size); returns the bytes
  // written: fewer than out_size once the data ends or `in` runs out. `in_is_all`: no input
  // follows `in`, so a stream it leaves unfinished is a truncated file.
  Result<std::size_t> inflate(std::string_view& in, char* out, std::size_t out_size, bool in_is_all);
  // True once the last member has ended.
  bool done() const { return done_; }

 private:
  Error error(const std::string& message) const;
  // Counts what one call consumed and produced; an error past the ratio limit.
  Status account(std::size_t in_bytes, const char* out, std::size_t out_bytes);

  std::string path_;
  std::uint64_t in_bytes_ = 0, out_bytes_ = 0;
  std::int64_t lines_ = 0;  // line breaks inflated so far
  std::unique_ptr<inflate_state> state_;
  bool between_members_ = false;  // a member ended; another may follow
  bool done_ = false;
};

// Reads a gzip file front to back, inflating it into a bounded window, as ChunkReader::open
// reads a plain one (same windows and carries); with `read_ahead`, reading and inflating run
// on the ChunkReader's background thread while the caller parses. file_offset() counts
// compressed bytes.
Result<std::unique_ptr<ChunkReader>> open_gzip_reader(const std::string& path, std::size_t chunk_bytes,
                                                      std::size_t carry_bytes, bool read_ahead);

// The first `max_bytes` of a gzip file's inflated content (fewer when it is shorter), for
// detecting its format.
Result<std::string> read_gzip_head(const std::string& path, std::size_t max_bytes);

}  // namespace kernlens
