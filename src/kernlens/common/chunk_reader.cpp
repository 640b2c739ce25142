#include "kernlens/common/chunk_reader.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kernlens {

bool ChunkReader::worth_reading_ahead() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) return true;
  return CPU_COUNT(&cpus) > 1;
}

Result<std::unique_ptr<ChunkReader>> ChunkReader::open(const std::string& path, std::size_t chunk_bytes,
                                                       std::size_t carry_bytes, bool read_ahead) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(path, 0, std::string("cannot open: ") + std::strerror(errno));
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<ChunkReader>(new ChunkReader(fd, path, chunk_bytes, carry_bytes, read_ahead));
}

ChunkReader::ChunkReader(int fd, std::string path, std::size_t chunk_bytes, std::size_t carry_bytes,
                         bool read_ahead)
    : fd_(fd), path_(std::move(path)), chunk_bytes_(chunk_bytes), carry_bytes_(carry_bytes),
      read_ahead_(read_ahead) {
  for (auto& slot : slots_) slot.bytes.reset(new char[carry_bytes_ + chunk_bytes_]);
  if (read_ahead_) loader_ = std::thread([this] { load(); });
}

ChunkReader::~ChunkReader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (loader_.joinable()) loader_.join();
  ::close(fd_);
}

void ChunkReader::fill(Slot& slot) {
  std::size_t length = 0;
  int error = 0;
  while (length < chunk_bytes_) {
    ssize_t n = ::pread(fd_, slot.bytes.get() + carry_bytes_ + length, chunk_bytes_ - length,
                        static_cast<off_t>(file_offset_ + length));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    length += static_cast<std::size_t>(n);
  }
  file_offset_ += length;
  slot.length = length;
  slot.error = error;
  slot.eof = error != 0 || length < chunk_bytes_;
}

void ChunkReader::load() {
  for (std::size_t i = 0;; ++i) {
    Slot& slot = slots_[i % 2];
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || !slot.ready; });
      if (stop_) return;
    }
    fill(slot);  // the slot is ours until marked ready: no lock needed
    {
      std::lock_guard<std::mutex> lock(mutex_);
      slot.ready = true;
    }
    changed_.notify_all();
    if (slot.eof) return;
  }
}

Result<std::string_view> ChunkReader::next(std::string_view carry) {
  if (delivered_all_) return std::string_view();
  if (carry.size() > carry_bytes_) {
    return make_error(path_, 0, "a record longer than " + std::to_string(carry_bytes_) + " bytes");
  }
  Slot& slot = slots_[next_slot_];
  Slot& previous = slots_[1 - next_slot_];
  if (read_ahead_) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return slot.ready; });
  } else {
    fill(slot);
  }
  if (slot.error) return make_error(path_, 0, std::string("cannot read: ") + std::strerror(slot.error));
  char* window = slot.bytes.get() + carry_bytes_ - carry.size();
  if (!carry.empty()) std::memmove(window, carry.data(), carry.size());  // it may live in `previous`
  if (read_ahead_) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (windows_ > 0) previous.ready = false;  // hand it back to the loader
    }
    changed_.notify_all();
  }
  ++windows_;
  delivered_ += slot.length;
  delivered_all_ = slot.eof;
  next_slot_ = 1 - next_slot_;
  return std::string_view(window, carry.size() + slot.length);
}

}  // namespace kernlens
