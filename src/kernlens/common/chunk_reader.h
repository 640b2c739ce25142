// Reads a file front to back in large chunks on a background thread, two buffers deep, so
// that reading overlaps the caller's parsing and memory stays bounded whatever the file's
// size. Each window handed out is the caller's unparsed tail of the previous window (a
// record cut by the chunk boundary) followed by the next chunk. A reused buffer is written
// and faulted in once, unlike a fresh buffer for the whole file (which the kernel must zero)
// or a file mapping (whose pages each fault on first touch): both cost more than the copy.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kernlens/common/error.h"

namespace kernlens {

class ChunkReader {
 public:
  // `carry_bytes` bounds the tail a window may carry into the next.
  // With `read_ahead`, a background thread fills the next chunk while the caller parses;
  // without, next() reads it (the bytes then land in the caller's own cache).
  static Result<std::unique_ptr<ChunkReader>> open(const std::string& path,
                                                   std::size_t chunk_bytes = 8 << 20,
                                                   std::size_t carry_bytes = 1 << 20,
                                                   bool read_ahead = true);
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
  std::size_t carry_bytes() const { return carry_bytes_; }

 private:
  struct Slot {
    std::unique_ptr<char[]> bytes;  // carry_bytes of room, then one chunk (left uninitialised:
                                    // only what is written is ever faulted in)
    std::size_t length = 0;   // bytes of file in the chunk part
    bool ready = false;       // filled and not yet handed out
    bool eof = false;         // nothing after this chunk
    int error = 0;
  };

  ChunkReader(int fd, std::string path, std::size_t chunk_bytes, std::size_t carry_bytes, bool read_ahead);
  void load();  // the loader thread
  void fill(Slot& slot);  // reads the next chunk into the slot

  int fd_;
  std::string path_;
  std::size_t chunk_bytes_, carry_bytes_;
  Slot slots_[2];
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  std::size_t next_slot_ = 0;     // the slot the next window comes from
  std::uint64_t delivered_ = 0;
  std::uint64_t windows_ = 0;
  std::uint64_t file_offset_ = 0;  // where the next chunk starts
  bool read_ahead_;
  bool delivered_all_ = false;
  std::thread loader_;
};

}  // namespace kernlens
