#include "kernlens/common/chunk_reader.h"

#include "kernlens/common/parallel_chunks.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kernlens {

bool ChunkReader::worth_reading_ahead() { return usable_cpus() > 1; }

namespace {

// A plain file's bytes (or a pipe's), front to back.
class FileSource : public ChunkSource {
 public:
  FileSource(int fd, std::string path, bool owns_fd) : fd_(fd), path_(std::move(path)), owns_fd_(owns_fd) {}
  ~FileSource() override {
    if (owns_fd_) ::close(fd_);
  }

  Result<std::size_t> fill(char* dest, std::size_t size) override {
    std::size_t length = 0;
    while (length < size) {
      ssize_t n = ::read(fd_, dest + length, size - length);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return make_error(path_, 0, std::string("cannot read: ") + std::strerror(errno));
      if (n == 0) break;
      length += static_cast<std::size_t>(n);
    }
    offset_ += length;
    return length;
  }
  std::uint64_t file_offset() const override { return offset_; }

 private:
  int fd_;
  std::string path_;
  bool owns_fd_;
  std::uint64_t offset_ = 0;
};

}  // namespace

Result<std::unique_ptr<ChunkReader>> ChunkReader::open(const std::string& path, std::size_t chunk_bytes,
                                                       std::size_t carry_bytes, bool read_ahead) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(path, 0, std::string("cannot open: ") + std::strerror(errno));
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return over(std::make_unique<FileSource>(fd, path, true), path, chunk_bytes, carry_bytes, read_ahead);
}

std::unique_ptr<ChunkReader> ChunkReader::over_descriptor(int fd, std::string name, std::size_t chunk_bytes,
                                                          std::size_t carry_bytes, bool read_ahead) {
  return over(std::make_unique<FileSource>(fd, name, false), name, chunk_bytes, carry_bytes, read_ahead);
}

std::unique_ptr<ChunkReader> ChunkReader::over(std::unique_ptr<ChunkSource> source, std::string path,
                                               std::size_t chunk_bytes, std::size_t carry_bytes, bool read_ahead) {
  return std::unique_ptr<ChunkReader>(
      new ChunkReader(std::move(source), std::move(path), chunk_bytes, carry_bytes, read_ahead));
}

ChunkReader::ChunkReader(std::unique_ptr<ChunkSource> source, std::string path, std::size_t chunk_bytes,
                         std::size_t carry_bytes, bool read_ahead)
    : source_(std::move(source)), path_(std::move(path)), chunk_bytes_(chunk_bytes), carry_bytes_(carry_bytes),
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
}

void ChunkReader::fill(Slot& slot) {
  auto length = source_->fill(slot.bytes.get() + carry_bytes_, chunk_bytes_);
  slot.length = length ? *length : 0;
  slot.error = length ? std::nullopt : std::optional<Error>(length.error());
  slot.eof = !length || *length < chunk_bytes_;
  slot.file_offset = source_->file_offset();
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
  if (slot.error) return *slot.error;
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
  file_offset_ = slot.file_offset;
  delivered_all_ = slot.eof;
  next_slot_ = 1 - next_slot_;
  return std::string_view(window, carry.size() + slot.length);
}

}  // namespace kernlens
