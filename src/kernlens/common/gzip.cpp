#include "kernlens/common/gzip.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace kernlens {

Inflater::Inflater(std::string path) : path_(std::move(path)), zs_(std::make_unique<z_stream>()) {
  // 16 + MAX_WBITS: a gzip wrapper, not a bare zlib stream.
  ready_ = inflateInit2(zs_.get(), 16 + MAX_WBITS) == Z_OK;
}

Inflater::~Inflater() {
  if (ready_) inflateEnd(zs_.get());
}

Error Inflater::error(const std::string& message) const {
  return make_error(path_, lines_ + 1, message + " (compressed byte " + std::to_string(in_bytes_) + ")");
}

Status Inflater::account(std::size_t in_bytes, const char* out, std::size_t out_bytes) {
  in_bytes_ += in_bytes;
  out_bytes_ += out_bytes;
  lines_ += std::count(out, out + out_bytes, '\n');
  if (out_bytes_ > kGzipRatioFrom && out_bytes_ > kMaxGzipRatio * in_bytes_) {
    return error("gzip data inflates more than " + std::to_string(kMaxGzipRatio) +
                 " times its size, far beyond any export (a decompression bomb?); refused");
  }
  return ok_status();
}

Result<std::size_t> Inflater::inflate(std::string_view& in, char* out, std::size_t out_size, bool in_is_all) {
  if (!ready_) return error("cannot start gzip decompression");
  zs_->next_out = reinterpret_cast<Bytef*>(out);
  zs_->avail_out = static_cast<uInt>(std::min<std::size_t>(out_size, UINT_MAX));
  while (zs_->avail_out > 0 && !done_) {
    if (between_members_) {
      if (in.empty()) {
        done_ = in_is_all;
        break;
      }
      inflateReset(zs_.get());  // another member follows
      between_members_ = false;
    }
    if (in.empty()) {
      if (in_is_all) return error("gzip data ends early: the file is truncated");
      break;
    }
    zs_->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs_->avail_in = static_cast<uInt>(std::min<std::size_t>(in.size(), UINT_MAX));
    const uInt offered = zs_->avail_in, room = zs_->avail_out;
    char* const produced = reinterpret_cast<char*>(zs_->next_out);
    const int rc = ::inflate(zs_.get(), Z_NO_FLUSH);
    in.remove_prefix(offered - zs_->avail_in);
    if (Status s = account(offered - zs_->avail_in, produced, room - zs_->avail_out); !s) return s.error();
    if (rc == Z_STREAM_END) {
      between_members_ = true;
    } else if (rc != Z_OK) {
      return error(std::string("corrupt gzip data: ") + (zs_->msg ? zs_->msg : "inflate failed"));
    }
  }
  return out_size - zs_->avail_out;
}

Result<std::unique_ptr<GzipChunkReader>> GzipChunkReader::open(const std::string& path, std::size_t chunk_bytes,
                                                               std::size_t carry_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(path, 0, std::string("cannot open: ") + std::strerror(errno));
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<GzipChunkReader>(new GzipChunkReader(fd, path, chunk_bytes, carry_bytes));
}

namespace {
constexpr std::size_t kInputBytes = 256 << 10;
}  // namespace

GzipChunkReader::GzipChunkReader(int fd, const std::string& path, std::size_t chunk_bytes, std::size_t carry_bytes)
    : fd_(fd), path_(path), chunk_bytes_(chunk_bytes), carry_bytes_(carry_bytes),
      window_(new char[carry_bytes + chunk_bytes]), input_(new char[kInputBytes]), inflater_(path) {}

GzipChunkReader::~GzipChunkReader() { ::close(fd_); }

Status GzipChunkReader::refill() {
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

Result<std::string_view> GzipChunkReader::next(std::string_view carry) {
  if (carry.size() > carry_bytes_) {
    return make_error(path_, 0, "a record longer than " + std::to_string(carry_bytes_) + " bytes");
  }
  char* window = window_.get() + carry_bytes_ - carry.size();
  if (!carry.empty()) std::memmove(window, carry.data(), carry.size());  // it lives in window_
  char* chunk = window_.get() + carry_bytes_;
  std::size_t length = 0;
  while (length < chunk_bytes_ && !inflater_.done()) {
    if (Status s = refill(); !s) return s.error();
    auto n = inflater_.inflate(pending_, chunk + length, chunk_bytes_ - length, file_ended_);
    if (!n) return n.error();
    length += *n;
  }
  return std::string_view(window, carry.size() + length);
}

Result<std::string> read_gzip_head(const std::string& path, std::size_t max_bytes) {
  auto reader = GzipChunkReader::open(path, max_bytes, 0);
  if (!reader) return reader.error();
  auto window = (*reader)->next({});
  if (!window) return window.error();
  return std::string(*window);
}

}  // namespace kernlens
