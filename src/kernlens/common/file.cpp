#include "kernlens/common/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace kernlens {
namespace {

// Below this size a plain read is cheaper than setting up a mapping.
constexpr std::size_t kMapThreshold = 1 << 20;

std::string errno_text(int err) { return std::strerror(err); }

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

Result<std::string> inflate_gzip(const std::string& path, std::string_view in) {
  z_stream zs{};
  // 16 + MAX_WBITS: gzip wrapper; concatenated members are handled by the loop below.
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    return make_error(path, 0, "cannot start gzip decompression");
  }
  std::string out;
  out.reserve(in.size() * 4);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  char chunk[1 << 16];
  int rc = Z_OK;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof(chunk);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(chunk, sizeof(chunk) - zs.avail_out);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      inflateReset(&zs);  // another gzip member follows
      continue;
    }
    if (rc != Z_OK) break;
    if (zs.avail_in == 0 && zs.avail_out != 0) break;  // input ended mid-stream
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    return make_error(path, 0,
                      rc == Z_OK || rc == Z_BUF_ERROR
                          ? "gzip data ends early: the file is truncated"
                          : std::string("corrupt gzip data: ") + (zs.msg ? zs.msg : "inflate failed"));
  }
  return out;
}

}  // namespace

InputBuffer::InputBuffer(InputBuffer&& other) noexcept { *this = std::move(other); }

InputBuffer& InputBuffer::operator=(InputBuffer&& other) noexcept {
  if (this == &other) return *this;
  release();
  owned_ = std::move(other.owned_);
  mapping_ = std::exchange(other.mapping_, nullptr);
  size_ = std::exchange(other.size_, 0);
  was_gzip_ = other.was_gzip_;
  data_ = mapping_ ? static_cast<const char*>(mapping_) : owned_.data();
  other.data_ = nullptr;
  return *this;
}

InputBuffer::~InputBuffer() { release(); }

void InputBuffer::release() {
  if (mapping_) munmap(mapping_, size_);
  mapping_ = nullptr;
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
  if (S_ISREG(st.st_mode) && size >= kMapThreshold) {
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      madvise(map, size, MADV_SEQUENTIAL);
      buf.mapping_ = map;
      buf.data_ = static_cast<const char*>(map);
      buf.size_ = size;
    }
  }
  if (!buf.mapping_) {  // small files, pipes, or mmap refused
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
