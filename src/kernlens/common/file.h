// Reading inputs into memory (gzip transparently inflated) and writing outputs atomically,
// so that a failed run never leaves a half-written file behind.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "kernlens/common/error.h"

namespace kernlens {

// The most an input whose size is not known before it is read (a pipe, or a gzip file's
// content when the format is read whole) may hold in memory. A regular file is held at its
// own size; formats that stream (ingest/reader.h) hold a bounded window instead.
inline constexpr std::size_t kMaxUnsizedInputBytes = std::size_t{4} << 30;

// The bytes of one input file, in memory. Large files are read by a few threads at once
// into a buffer backed by huge pages where the kernel allows. (A file mapping would avoid
// the copy, but on virtual machines the first touch of each of its 4 KiB pages costs about
// a microsecond, 60 ms for 200 MB, and touches from several threads contend.) gzip files
// are inflated (recognised by their magic bytes, not their extension).
class InputBuffer {
 public:
  InputBuffer() = default;
  InputBuffer(InputBuffer&&) noexcept;
  InputBuffer& operator=(InputBuffer&&) noexcept;
  InputBuffer(const InputBuffer&) = delete;
  InputBuffer& operator=(const InputBuffer&) = delete;
  ~InputBuffer();

  std::string_view bytes() const { return {data_, size_}; }
  bool was_gzip() const { return was_gzip_; }

  // Reads `path`. Errors: missing, unreadable, a directory, a device or socket (a pipe is
  // read), empty, corrupt gzip, more than kMaxUnsizedInputBytes from a pipe or gzip.
  static Result<InputBuffer> open(const std::string& path);
  // Wraps bytes already in memory (tests, fuzzers).
  static InputBuffer from_string(std::string bytes);

 private:
  void release();
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  void* mapping_ = nullptr;  // an anonymous mapping holding a large file's bytes
  std::size_t mapping_bytes_ = 0;
  std::string owned_;        // inflated or copied bytes
  bool was_gzip_ = false;
};

// A regular file mapped read-only: its bytes where they lie in the page cache, without the copy
// into a buffer that InputBuffer and ChunkReader make, so that several parse threads read them
// at once. (On Linux 6 the kernel maps a file's cached pages in large folios: touching all of
// a 200 MB mapping took 10 ms here where reading it into a buffer took 30 ms; on older
// kernels each 4 KiB page faulted on its own, hence InputBuffer's copy.) release_before()
// gives back the pages a reader has passed, so that its memory stays bounded.
class FileMapping {
 public:
  FileMapping(FileMapping&& other) noexcept;
  FileMapping& operator=(FileMapping&&) = delete;
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  ~FileMapping();

  // Null when `path` is no regular file, is empty, or cannot be mapped (the caller then reads
  // it as before).
  static std::optional<FileMapping> open(const std::string& path);

  std::string_view bytes() const { return {data_, size_}; }
  // Unmaps the whole pages before `offset` from this process (they stay in the page cache).
  // Bytes before `offset` must not be read again.
  void release_before(std::size_t offset);
  std::size_t released() const { return released_; }  // the bytes unmapped so far, from the start

 private:
  FileMapping(const char* data, std::size_t size) : data_(data), size_(size) {}
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t released_ = 0;
};

// The first `max_bytes` of a file (fewer when it is shorter), for detecting its format.
Result<std::string> read_file_head(const std::string& path, std::size_t max_bytes);
// The same from an open descriptor, from its current offset on; errors name `name`.
Result<std::string> read_descriptor_head(int fd, const std::string& name, std::size_t max_bytes);

// The gzip magic bytes.
bool is_gzip(std::string_view bytes);

// Writes `content` to `path` ("-": standard output). A regular file (or a new one) is
// written through a temporary file beside it and a rename: readers see the old file or the
// whole new one, never a part, and a file replaced keeps its mode (and owner, where allowed).
// A symbolic link is followed: the file it points to is written, the link stays. A device,
// FIFO or socket is written in place (never replaced); /dev/stdout, /dev/stderr, /dev/fd/N
// and /proc/self/fd/N through the descriptor they name; a directory is an error.
Status write_file_atomically(const std::string& path, std::string_view content);

// Whether both paths exist and name the same file (after links), e.g. an output that would
// overwrite an input.
bool same_file(const std::string& a, const std::string& b);

// Whether `path` is a regular file (after links); false on any error.
bool is_regular_file_at(const std::string& path);

// Writes all of `bytes` to `fd`, retrying short writes and EINTR; gives up silently on an
// error (a closed echo target or a full disk must not stop a run). Async-signal-safe: only
// write(2), so signal handlers use it too.
void write_all_fd(int fd, std::string_view bytes);

}  // namespace kernlens
