#include "kernlens/common/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "kernlens/common/gzip.h"
#include "kernlens/common/memory.h"

namespace kernlens {
namespace {

// From this size a file is read into its own mapping by several threads.
constexpr std::size_t kLargeFile = 8 << 20;
constexpr std::size_t kHugePage = 2 << 20;

// Reads [from, to) of `fd` into dest + from; false on an error or an early end of file.
bool pread_range(int fd, char* dest, std::size_t from, std::size_t to, int& err) {
  while (from < to) {
    ssize_t n = ::pread(fd, dest + from, to - from, static_cast<off_t>(from));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      return false;
    }
    from += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads `size` bytes of `fd` into `dest`, split across up to four threads.
int read_in_parallel(int fd, char* dest, std::size_t size) {
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  const std::size_t part = (size / threads + kHugePage - 1) / kHugePage * kHugePage;
  std::vector<int> errs(threads, 0);
  std::vector<std::thread> workers;
  auto work = [&](unsigned t) {
    const std::size_t from = std::min(size, part * t), to = std::min(size, part * (t + 1));
    if (!pread_range(fd, dest, from, to, errs[t]) && errs[t] == 0) errs[t] = EIO;
  };
  for (unsigned t = 1; t < threads; ++t) workers.emplace_back(work, t);
  work(0);
  for (auto& w : workers) w.join();
  for (int e : errs) {
    if (e) return e;
  }
  return 0;
}

std::string errno_text(int err) { return std::strerror(err); }


Result<std::string> inflate_gzip(const std::string& path, std::string_view in) {
  Inflater inflater(path);
  std::string out;
  out.reserve(in.size() * 4);
  char chunk[1 << 16];
  while (!inflater.done()) {
    auto n = inflater.inflate(in, chunk, sizeof(chunk), true);
    if (!n) return n.error();
    out.append(chunk, *n);
  }
  return out;
}

}  // namespace

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

Result<std::string> read_file_head(const std::string& path, std::size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(path, 0, "cannot open: " + errno_text(errno));
  std::string head(max_bytes, '\0');
  std::size_t got = 0;
  while (got < max_bytes) {
    ssize_t n = ::read(fd, head.data() + got, max_bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return make_error(path, 0, "cannot read: " + errno_text(err));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  head.resize(got);
  return head;
}

InputBuffer::InputBuffer(InputBuffer&& other) noexcept { *this = std::move(other); }

InputBuffer& InputBuffer::operator=(InputBuffer&& other) noexcept {
  if (this == &other) return *this;
  release();
  owned_ = std::move(other.owned_);
  mapping_ = std::exchange(other.mapping_, nullptr);
  mapping_bytes_ = std::exchange(other.mapping_bytes_, 0);
  size_ = std::exchange(other.size_, 0);
  was_gzip_ = other.was_gzip_;
  data_ = mapping_ ? static_cast<const char*>(mapping_) : owned_.data();
  other.data_ = nullptr;
  return *this;
}

InputBuffer::~InputBuffer() { release(); }

void InputBuffer::release() {
  if (mapping_) munmap(mapping_, mapping_bytes_);
  mapping_ = nullptr;
  mapping_bytes_ = 0;
  data_ = nullptr;
  size_ = 0;
  owned_.clear();
}

InputBuffer InputBuffer::from_string(std::string bytes) {
  InputBuffer buf;
  buf.owned_ = std::move(bytes);
  buf.data_ = buf.owned_.data();
  buf.size_ = buf.owned_.size();
  return buf;
}

Result<InputBuffer> InputBuffer::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(path, 0, "cannot open: " + errno_text(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return make_error(path, 0, "cannot stat: " + errno_text(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return make_error(path, 0, "is a directory, expected an export file");
  }
  InputBuffer buf;
  const auto size = static_cast<std::size_t>(st.st_size);
  if (S_ISREG(st.st_mode) && size >= kLargeFile) {
    const std::size_t bytes = (size + kHugePage - 1) / kHugePage * kHugePage;
    void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map != MAP_FAILED) {
      advise_huge_pages(map, bytes);
      buf.mapping_ = map;
      buf.mapping_bytes_ = bytes;
      buf.data_ = static_cast<const char*>(map);
      buf.size_ = size;
      if (int err = read_in_parallel(fd, static_cast<char*>(map), size); err != 0) {
        ::close(fd);
        return make_error(path, 0, "cannot read: " + errno_text(err));
      }
    }
  }
  if (!buf.mapping_) {  // small files, pipes, or no mapping to be had
    std::string bytes;
    char chunk[1 << 16];
    while (true) {
      ssize_t n = ::read(fd, chunk, sizeof(chunk));
      if (n < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd);
        return make_error(path, 0, "cannot read: " + errno_text(err));
      }
      if (n == 0) break;
      bytes.append(chunk, static_cast<std::size_t>(n));
    }
    buf = from_string(std::move(bytes));
  }
  ::close(fd);
  if (buf.size_ == 0) return make_error(path, 0, "empty file");
  if (is_gzip(buf.bytes())) {
    auto inflated = inflate_gzip(path, buf.bytes());
    if (!inflated) return inflated.error();
    if (inflated->empty()) return make_error(path, 0, "empty file (after gzip decompression)");
    buf = from_string(std::move(inflated).value());
    buf.was_gzip_ = true;
  }
  return buf;
}

Status write_file_atomically(const std::string& path, std::string_view content) {
  if (path == "-") {
    if (std::fwrite(content.data(), 1, content.size(), stdout) != content.size() ||
        std::fflush(stdout) != 0) {
      return make_error("<stdout>", 0, "cannot write: " + errno_text(errno));
    }
    return ok_status();
  }
  std::string tmp = path + ".kernlens-tmp-XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return make_error(path, 0, "cannot create output: " + errno_text(errno));
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return make_error(path, 0, "cannot write output: " + errno_text(err));
    }
    done += static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600; outputs are ordinary files the user may share.
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return make_error(path, 0, "cannot write output: " + errno_text(err));
  }
  return ok_status();
}

}  // namespace kernlens
