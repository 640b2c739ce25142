#include "kernlens/common/gzip.h"

#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "kernlens/common/bits.h"

namespace kernlens {
namespace {

std::string isal_message(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK: return "invalid deflate block";
    case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER: return "not a gzip header";
    case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
    default: return "inflate failed (" + std::to_string(rc) + ")";
  }
}

void start_member(inflate_state& state) {
  isal_inflate_init(&state);
  state.crc_flag = ISAL_GZIP;  // the gzip wrapper read and its CRC checked
}

}  // namespace

Inflater::Inflater(std::string path) : path_(std::move(path)), state_(std::make_unique<inflate_state>()) {
  start_member(*state_);
}

Inflater::~Inflater() = default;

Error Inflater::error(const std::string& message) const {
  return make_error(path_, lines_ + 1, message + " (compressed byte " + std::to_string(in_bytes_) + ")");
}

Status Inflater::account(std::size_t in_bytes, const char* out, std::size_t out_bytes) {
  in_bytes_ += in_bytes;
  out_bytes_ += out_bytes;
  lines_ += static_cast<std::int64_t>(count_byte(out, out_bytes, '\n'));
  if (out_bytes_ > kGzipRatioFrom && out_bytes_ > kMaxGzipRatio * in_bytes_) {
    return error("gzip data inflates more than " + std::to_string(kMaxGzipRatio) +
                 " times its size, far beyond any export (a decompression bomb?); refused");
  }
  return ok_status();
}

Result<std::size_t> Inflater::inflate(std::string_view& in, char* out, std::size_t out_size, bool in_is_all) {
  inflate_state& st = *state_;
  std::size_t written = 0;
  while (written < out_size && !done_) {
    if (between_members_) {
      if (in.empty()) {
        done_ = in_is_all;
        break;
      }
      start_member(st);  // another member follows
      between_members_ = false;
    }
    st.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(in.data()));
    st.avail_in = static_cast<std::uint32_t>(std::min<std::size_t>(in.size(), UINT32_MAX));
    st.next_out = reinterpret_cast<std::uint8_t*>(out + written);
    st.avail_out = static_cast<std::uint32_t>(std::min<std::size_t>(out_size - written, UINT32_MAX));
    const std::uint32_t offered = st.avail_in, room = st.avail_out;
    const int rc = isal_inflate(&st);
    const std::size_t used = offered - st.avail_in, produced = room - st.avail_out;
    in.remove_prefix(used);
    if (Status s = account(used, out + written, produced); !s) return s.error();
    written += produced;
    if (rc < 0) return error("corrupt gzip data: " + isal_message(rc));
    if (st.block_state == ISAL_BLOCK_FINISH) {
      between_members_ = true;
    } else if (used == 0 && produced == 0) {  // it needs more input
      if (in.empty() && in_is_all) return error("gzip data ends early: the file is truncated");
      break;
    }
  }
  return written;
}

namespace {

constexpr std::size_t kInputBytes = 256 << 10;

// A gzip file's inflated bytes, front to back.
class GzipSource : public ChunkSource {
 public:
  GzipSource(int fd, const std::string& path) : fd_(fd), path_(path), input_(new char[kInputBytes]), inflater_(path) {}
  ~GzipSource() override { ::close(fd_); }

  Result<std::size_t> fill(char* dest, std::size_t size) override {
    std::size_t length = 0;
    while (length < size && !inflater_.done()) {
      if (Status s = refill(); !s) return s.error();
      auto n = inflater_.inflate(pending_, dest + length, size - length, file_ended_);
      if (!n) return n.error();
      length += *n;
    }
    return length;
  }
  std::uint64_t file_offset() const override { return file_offset_; }

 private:
  // Reads more of the file when the input is used up.
  Status refill() {
    if (!pending_.empty() || file_ended_) return ok_status();
    while (true) {
      ssize_t n = ::read(fd_, input_.get(), kInputBytes);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return make_error(path_, 0, std::string("cannot read: ") + std::strerror(errno));
      file_ended_ = n == 0;
      file_offset_ += static_cast<std::uint64_t>(n);
      pending_ = std::string_view(input_.get(), static_cast<std::size_t>(n));
      return ok_status();
    }
  }

  int fd_;
  std::string path_;
  std::unique_ptr<char[]> input_;
  std::string_view pending_;  // read, not yet inflated
  bool file_ended_ = false;
  std::uint64_t file_offset_ = 0;
  Inflater inflater_;
};

}  // namespace

Result<std::unique_ptr<ChunkReader>> open_gzip_reader(const std::string& path, std::size_t chunk_bytes,
                                                      std::size_t carry_bytes, bool read_ahead) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(path, 0, std::string("cannot open: ") + std::strerror(errno));
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return ChunkReader::over(std::make_unique<GzipSource>(fd, path), path, chunk_bytes, carry_bytes, read_ahead);
}

Result<std::string> read_gzip_head(const std::string& path, std::size_t max_bytes) {
  auto reader = open_gzip_reader(path, max_bytes, 0, false);
  if (!reader) return reader.error();
  auto window = (*reader)->next({});
  if (!window) return window.error();
  return std::string(*window);
}

}  // namespace kernlens
