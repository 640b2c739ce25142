// gzip inflation in steps: whole inputs (InputBuffer) and files streamed through a bounded
// window (GzipChunkReader), with the same errors for a truncated or corrupt file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kernlens/common/error.h"

struct z_stream_s;

namespace kernlens {

// gzip data that inflates more than this many times its compressed size, past the first
// kGzipRatioFrom bytes, is refused: real exports compress 10 to 40 times; a run of one byte
// (a decompression bomb) 229 times at gzip -1, 1029 times at -6 and above.
inline constexpr std::uint64_t kMaxGzipRatio = 200;
inline constexpr std::uint64_t kGzipRatioFrom = 64 << 20;

// One zlib stream over a gzip file, concatenated members included. Errors name the line of
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
  std::unique_ptr<z_stream_s> zs_;
  bool ready_ = false;           // inflateInit2 succeeded
  bool between_members_ = false;  // a member ended; another may follow
  bool done_ = false;
};

// Reads a gzip file front to back, inflating it into a bounded window, as ChunkReader reads a
// plain one: each window is the caller's unparsed tail of the previous window followed by
// the next chunk of inflated bytes, so memory stays bounded whatever the file's size.
class GzipChunkReader {
 public:
  static Result<std::unique_ptr<GzipChunkReader>> open(const std::string& path, std::size_t chunk_bytes = 1 << 20,
                                                       std::size_t carry_bytes = 16 << 20);
  ~GzipChunkReader();
  GzipChunkReader(const GzipChunkReader&) = delete;
  GzipChunkReader& operator=(const GzipChunkReader&) = delete;

  // The next window: `carry` (up to carry_bytes) followed by the next inflated chunk; an
  // empty one once the data ends. The previous window's bytes may be overwritten.
  Result<std::string_view> next(std::string_view carry);
  // True once a window has included the last inflated byte.
  bool at_end() const { return inflater_.done(); }
  // Bytes of the (compressed) file read so far, for progress.
  std::uint64_t file_offset() const { return file_offset_; }

 private:
  GzipChunkReader(int fd, const std::string& path, std::size_t chunk_bytes, std::size_t carry_bytes);
  Status refill();  // reads more of the file when the input is used up

  int fd_;
  std::string path_;
  std::size_t chunk_bytes_, carry_bytes_;
  std::unique_ptr<char[]> window_;  // carry_bytes of room, then one chunk
  std::unique_ptr<char[]> input_;
  std::string_view pending_;  // read, not yet inflated
  bool file_ended_ = false;
  std::uint64_t file_offset_ = 0;
  Inflater inflater_;
};

// The first `max_bytes` of a gzip file's inflated content (fewer when it is shorter), for
// detecting its format.
Result<std::string> read_gzip_head(const std::string& path, std::size_t max_bytes);

}  // namespace kernlens
