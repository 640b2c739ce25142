#include "kernlens/common/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <charconv>
#include <optional>
#include <filesystem>
#include <thread>
#include <utility>
#include <vector>

#include "kernlens/common/gzip.h"
#include "kernlens/common/memory.h"
#include "kernlens/common/parallel_chunks.h"

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
  run_parallel(threads, [&](std::size_t t) {
    const std::size_t from = std::min(size, part * t), to = std::min(size, part * (t + 1));
    if (!pread_range(fd, dest, from, to, errs[t]) && errs[t] == 0) errs[t] = EIO;
  });
  for (int e : errs) {
    if (e) return e;
  }
  return 0;
}

std::string errno_text(int err) { return std::strerror(err); }


std::string too_large(std::string_view what) {
  return std::string(what) + " more than " + std::to_string(kMaxUnsizedInputBytes >> 30) +
         " GiB, the most kernlens holds in memory for an input of unknown size";
}

Result<std::string> inflate_gzip(const std::string& path, std::string_view in) {
  Inflater inflater(path);
  std::string out;
  out.reserve(std::min(in.size() * 4, kMaxUnsizedInputBytes));
  char chunk[1 << 16];
  while (!inflater.done()) {
    auto n = inflater.inflate(in, chunk, sizeof(chunk), true);
    if (!n) return n.error();
    if (out.size() + *n > kMaxUnsizedInputBytes) return make_error(path, 0, too_large("gzip data that inflates to"));
    out.append(chunk, *n);
  }
  return out;
}

// What kernlens cannot read from: a device (/dev/zero, a terminal) or a socket would be read
// without end or without sense. Empty when `mode` is readable.
std::string unreadable_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory, expected an export file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not an export file (kernlens reads files and pipes)";
  if (S_ISSOCK(mode)) return "is a socket, not an export file (kernlens reads files and pipes)";
  return "";
}

}  // namespace

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

Result<std::string> read_file_head(const std::string& path, std::size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(path, 0, "cannot open: " + errno_text(errno));
  auto head = read_descriptor_head(fd, path, max_bytes);
  ::close(fd);
  return head;
}

Result<std::string> read_descriptor_head(int fd, const std::string& name, std::size_t max_bytes) {
  // Grown as the bytes come: a large limit on a small file must not cost a large buffer to
  // zero (16 MiB took 14 ms).
  constexpr std::size_t kFirstBytes = 64u << 10;
  std::string head(std::min(max_bytes, kFirstBytes), '\0');
  std::size_t got = 0;
  while (got < max_bytes) {
    if (got == head.size()) head.resize(std::min(max_bytes, head.size() * 2));
    ssize_t n = ::read(fd, head.data() + got, head.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(name, 0, "cannot read: " + errno_text(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
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

std::optional<FileMapping> FileMapping::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  void* map = MAP_FAILED;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    map = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  }
  ::close(fd);  // the mapping keeps the file
  if (map == MAP_FAILED) return std::nullopt;
  madvise(map, static_cast<std::size_t>(st.st_size), MADV_SEQUENTIAL);
  return FileMapping(static_cast<const char*>(map), static_cast<std::size_t>(st.st_size));
}

FileMapping::FileMapping(FileMapping&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)), released_(other.released_) {}

FileMapping::~FileMapping() {
  if (data_) munmap(const_cast<char*>(data_ + released_), size_ - released_);
}

void FileMapping::release_before(std::size_t offset) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t end = std::min(offset, size_) / page * page;
  if (end <= released_) return;
  munmap(const_cast<char*>(data_ + released_), end - released_);
  released_ = end;
}

Result<InputBuffer> InputBuffer::open(const std::string& path) {
  struct stat st {};
  // Before opening: opening some devices already does something.
  if (::stat(path.c_str(), &st) == 0) {
    if (std::string why = unreadable_kind(st.st_mode); !why.empty()) return make_error(path, 0, why);
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(path, 0, "cannot open: " + errno_text(errno));
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return make_error(path, 0, "cannot stat: " + errno_text(err));
  }
  if (std::string why = unreadable_kind(st.st_mode); !why.empty()) {
    ::close(fd);
    return make_error(path, 0, why);
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
      if (bytes.size() + static_cast<std::size_t>(n) > kMaxUnsizedInputBytes) {
        ::close(fd);
        return make_error(path, 0, too_large("a pipe that holds"));
      }
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

namespace {

// Writes all of `content` to `fd`; 0 or the errno of the failure.
int write_all(int fd, std::string_view content) {
  std::size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// The descriptor that /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N names: a file
// this process has open, maybe one the shell opened to append (opening the name again would
// start a new, truncating write at offset 0). nullopt for any other path.
std::optional<int> own_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.rfind(prefix, 0) != 0) continue;
    std::string_view number = std::string_view(path).substr(prefix.size());
    int fd = -1;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), fd);
    if (ec == std::errc() && end == number.data() + number.size() && fcntl(fd, F_GETFD) != -1) return fd;
  }
  return std::nullopt;
}

// The file a dangling chain of symbolic links names (to be created).
Result<std::string> resolve_links(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path current = path;
  for (int hops = 0; hops < 40; ++hops) {  // Linux's own limit (ELOOP)
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return current.string();
    std::error_code ec;
    fs::path target = fs::read_symlink(current, ec);
    if (ec) return make_error(path, 0, "cannot read the symbolic link " + current.string() + ": " + ec.message());
    current = target.is_absolute() ? target : current.parent_path() / target;
  }
  return make_error(path, 0, "cannot write output: too many levels of symbolic links");
}

// A device, FIFO or other non-regular file is written in place, as a shell's `>` would:
// renaming over it would replace it (as root, /dev/null itself) with a regular file.
Status write_in_place(const std::string& path, std::string_view content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return make_error(path, 0, "cannot open output: " + errno_text(errno));
  int err = write_all(fd, content);
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) return make_error(path, 0, "cannot write output: " + errno_text(err));
  return ok_status();
}

// A regular file (new, or replacing one whose mode and owner it keeps) through a temporary
// file beside it and a rename, so that readers see the old file or the whole new one.
Status write_by_rename(const std::string& path, const std::string& target, std::string_view content,
                       const struct stat* old) {
  std::string tmp = target + ".kernlens-tmp-XXXXXX";
  int fd = mkstemp(tmp.data());
  if (fd < 0) return make_error(path, 0, "cannot create output: " + errno_text(errno));
  int err = write_all(fd, content);
  if (err == 0) {
    if (old) {
      // Best effort, as cp -p: only root may give a file to another owner.
      [[maybe_unused]] int owner_kept = ::fchown(fd, old->st_uid, old->st_gid);
      if (::fchmod(fd, old->st_mode & 07777) != 0) err = errno;
    } else {
      // mkstemp creates 0600; new outputs are ordinary files the user may share.
      mode_t mask = umask(0);
      umask(mask);
      if (::fchmod(fd, 0666 & ~mask) != 0) err = errno;
    }
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), target.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return make_error(path, 0, "cannot write output: " + errno_text(err));
  }
  return ok_status();
}

}  // namespace

Status write_file_atomically(const std::string& path, std::string_view content) {
  if (path == "-") {
    if (std::fwrite(content.data(), 1, content.size(), stdout) != content.size() ||
        std::fflush(stdout) != 0) {
      return make_error("<stdout>", 0, "cannot write: " + errno_text(errno));
    }
    return ok_status();
  }
  if (auto fd = own_descriptor(path)) {
    if (int err = write_all(*fd, content); err != 0) return make_error(path, 0, "cannot write output: " + errno_text(err));
    return ok_status();
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {  // new, or a link to a file to create
    auto target = resolve_links(path);
    if (!target) return target.error();
    return write_by_rename(path, *target, content, nullptr);
  }
  if (S_ISDIR(st.st_mode)) return make_error(path, 0, "cannot write output: is a directory");
  if (!S_ISREG(st.st_mode)) return write_in_place(path, content);
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real) return make_error(path, 0, "cannot resolve the output's path: " + errno_text(errno));
  std::string target = real;
  std::free(real);
  return write_by_rename(path, target, content, &st);
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

bool is_regular_file_at(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

void write_all_fd(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace kernlens
