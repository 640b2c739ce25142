// Reads a file front to back in large chunks on a background thread, two buffers deep, so
// that reading overlaps the caller's parsing and memory stays bounded whatever the file's
// size. The chunks come from a ChunkSource: the file's bytes, or a gzip file's inflated bytes
// (common/gzip.h), so that inflating runs on the background thread too. Each window handed out is the caller's unparsed tail of the previous window (a
// record cut by the chunk boundary) followed by the next chunk. A reused buffer is written
// and faulted in once, unlike a fresh buffer for the whole file (which the kernel must zero).
// A plain file is cheaper mapped (common/file.h FileMapping: no copy at all, the ncu raw page
// and the PyTorch trace readers); this is for what cannot be mapped: gzip, pipes.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kernlens/common/error.h"

namespace kernlens {

// What fills a ChunkReader's chunks, called from one thread at a time.
class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // Writes up to `size` bytes at `dest`: fewer only where the data ends.
  virtual Result<std::size_t> fill(char* dest, std::size_t size) = 0;
  // Bytes of the file read so far (for a compressed file, the compressed bytes), for progress.
  virtual std::uint64_t file_offset() const = 0;
};

class ChunkReader {
 public:
  // `carry_bytes` bounds the tail a window may carry into the next.
  // With `read_ahead`, a background thread fills the next chunk while the caller parses;
  // without, next() reads it (the bytes then land in the caller's own cache).
  static Result<std::unique_ptr<ChunkReader>> open(const std::string& path,
                                                   std::size_t chunk_bytes = 8 << 20,
                                                   std::size_t carry_bytes = 1 << 20,
                                                   bool read_ahead = true);
  // The same from an open descriptor (standard input, a pipe), left open; `name` in errors.
  static std::unique_ptr<ChunkReader> over_descriptor(int fd, std::string name, std::size_t chunk_bytes,
                                                      std::size_t carry_bytes, bool read_ahead);
  // The same over any source; `path` names it in errors.
  static std::unique_ptr<ChunkReader> over(std::unique_ptr<ChunkSource> source, std::string path,
                                           std::size_t chunk_bytes, std::size_t carry_bytes, bool read_ahead);
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // The next window: `carry` (a tail of the previous window, or anything up to carry_bytes)
  // followed by the next chunk of the file. An empty window once the file is consumed.
  // The previous window's bytes may be overwritten by this call: copy what must outlive it.
  Result<std::string_view> next(std::string_view carry);

  // Whether the process may run on more than one CPU (its affinity, as `taskset` sets it):
  // reading ahead on a single CPU only adds thread switches.
  static bool worth_reading_ahead();

  // True once a window has included the file's last byte.
  bool at_end() const { return delivered_all_; }
  // Bytes of the file delivered so far (carried tails not counted twice).
  std::uint64_t offset() const { return delivered_; }
  // Bytes of the file behind the windows handed out so far (compressed bytes for gzip).
  std::uint64_t file_offset() const { return file_offset_; }
  std::size_t carry_bytes() const { return carry_bytes_; }

 private:
  struct Slot {
    std::unique_ptr<char[]> bytes;  // carry_bytes of room, then one chunk (left uninitialised:
                                    // only what is written is ever faulted in)
    std::size_t length = 0;   // bytes of data in the chunk part
    std::uint64_t file_offset = 0;  // the source's file_offset() after filling it
    bool ready = false;       // filled and not yet handed out
    bool eof = false;         // nothing after this chunk
    std::optional<Error> error;
  };

  ChunkReader(std::unique_ptr<ChunkSource> source, std::string path, std::size_t chunk_bytes,
              std::size_t carry_bytes, bool read_ahead);
  void load();  // the loader thread
  void fill(Slot& slot);  // fills the slot with the next chunk

  std::unique_ptr<ChunkSource> source_;
  std::string path_;
  std::size_t chunk_bytes_, carry_bytes_;
  Slot slots_[2];
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  std::size_t next_slot_ = 0;     // the slot the next window comes from
  std::uint64_t delivered_ = 0;
  std::uint64_t windows_ = 0;
  std::uint64_t file_offset_ = 0;
  bool read_ahead_;
  bool delivered_all_ = false;
  std::thread loader_;
};

}  // namespace kernlens
