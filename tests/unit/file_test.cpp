#include "kernlens/common/file.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <cstring>
#include <future>

#include "kernlens/common/gzip.h"
#include "test_util.h"

namespace kernlens {
namespace {

std::string gzip(const std::string& data) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, data.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

TEST(InputBuffer, ReadsPlainSmallAndMappedLargeFiles) {
  test::TempDir dir;
  dir.write("small.csv", "abc");
  std::string big(3 << 20, 'x');
  dir.write("big.csv", big);
  auto small = InputBuffer::open(dir.file("small.csv"));
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->bytes(), "abc");
  auto large = InputBuffer::open(dir.file("big.csv"));
  ASSERT_TRUE(large.ok());
  EXPECT_EQ(large->bytes().size(), big.size());
  InputBuffer moved = std::move(large).value();
  EXPECT_EQ(moved.bytes().substr(0, 3), "xxx");
}

TEST(InputBuffer, InflatesGzipIncludingConcatenatedMembers) {
  test::TempDir dir;
  dir.write("a.gz", gzip("hello ") + gzip("world"));
  auto buf = InputBuffer::open(dir.file("a.gz"));
  ASSERT_TRUE(buf.ok()) << buf.error().to_string();
  EXPECT_EQ(buf->bytes(), "hello world");
  EXPECT_TRUE(buf->was_gzip());
}

TEST(InputBuffer, ClearErrors) {
  test::TempDir dir;
  dir.write("empty.csv", "");
  std::string gz = gzip(std::string(10000, 'a'));
  dir.write("cut.gz", gz.substr(0, gz.size() / 2));
  dir.write("corrupt.gz", std::string("\x1f\x8b\x08\x00garbage-garbage", 20));
  dir.write("empty.gz", gzip(""));
  const std::pair<std::string, std::string> cases[] = {
      {dir.file("missing.csv"), "cannot open: No such file or directory"},
      {dir.path().string(), "is a directory"},
      {dir.file("empty.csv"), "empty file"},
      {dir.file("cut.gz"), "gzip data ends early: the file is truncated"},
      {dir.file("corrupt.gz"), "corrupt gzip data"},
      {dir.file("empty.gz"), "empty file (after gzip decompression)"},
  };
  for (const auto& [path, message] : cases) {
    auto buf = InputBuffer::open(path);
    ASSERT_FALSE(buf.ok()) << path;
    EXPECT_EQ(buf.error().file, path);
    EXPECT_NE(buf.error().message.find(message), std::string::npos) << buf.error().to_string();
  }
}

// Everything a gzip reader hands out, less the carried tails: the file's inflated bytes.
Result<std::string> stream_all(const std::string& path, std::size_t chunk, std::size_t carry, bool read_ahead) {
  auto reader = open_gzip_reader(path, chunk, carry, read_ahead);
  if (!reader) return reader.error();
  std::string all;
  std::string_view tail;
  while (true) {
    auto window = (*reader)->next(tail);
    if (!window) return window.error();
    all += window->substr(tail.size());
    if ((*reader)->at_end()) return all;
    tail = window->substr(window->size() - std::min<std::size_t>(window->size(), carry / 2));
  }
}

TEST(GzipReader, WindowsOfConcatenatedMembersAndTheSameErrors) {
  test::TempDir dir;
  std::string data;
  for (int i = 0; data.size() < 300000; ++i) data += "line " + std::to_string(i * 7919 % 100003) + "\n";
  dir.write("two.gz", gzip(data.substr(0, 100000)) + gzip(data.substr(100000)));
  const std::string gz = gzip(data);
  dir.write("cut.gz", gz.substr(0, gz.size() / 2));
  dir.write("corrupt.gz", gz.substr(0, 20) + std::string(200, 'x'));
  for (bool read_ahead : {false, true}) {  // inflated by the caller, or on the reader's thread
    auto all = stream_all(dir.file("two.gz"), 4096, 1024, read_ahead);
    ASSERT_TRUE(all.ok()) << all.error().to_string();
    EXPECT_EQ(*all, data);
    for (const auto& [file, message] : {std::pair{"cut.gz", "gzip data ends early: the file is truncated"},
                                        std::pair{"corrupt.gz", "corrupt gzip data"}}) {
      auto r = stream_all(dir.file(file), 4096, 1024, read_ahead);
      ASSERT_FALSE(r.ok()) << file;
      EXPECT_NE(r.error().message.find(message), std::string::npos) << r.error().to_string();
      EXPECT_EQ(r.error().file, dir.file(file));
    }
  }
  auto head = read_gzip_head(dir.file("two.gz"), 1000);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(*head, data.substr(0, 1000));
}

// The inflater given its input a byte at a time (as a file read in pieces ends anywhere: in
// the header, a block, the trailer, between members) gives the same bytes, and tells a file
// that ends early from one that ends between members.
TEST(Inflater, InputInPiecesOfOneByte) {
  std::string data;
  for (int i = 0; data.size() < 50000; ++i) data += "event " + std::to_string(i * 31 % 977) + "\n";
  const std::string gz = gzip(data.substr(0, 20000)) + gzip(data.substr(20000));
  auto inflate_bytewise = [](const std::string& in, std::string& out) -> Status {
    Inflater inflater("x.gz");
    char buffer[777];
    for (std::size_t i = 0; i <= in.size() && !inflater.done(); ++i) {
      std::string_view piece = i < in.size() ? std::string_view(in).substr(i, 1) : std::string_view();
      const bool last = i == in.size();
      do {
        auto n = inflater.inflate(piece, buffer, sizeof(buffer), last);
        if (!n) return n.error();
        out.append(buffer, *n);
        if (*n < sizeof(buffer)) break;
      } while (true);
      EXPECT_TRUE(piece.empty());
    }
    return ok_status();
  };
  std::string out;
  Status s = inflate_bytewise(gz, out);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ(out, data);
  out.clear();
  s = inflate_bytewise(gz.substr(0, gz.size() - 3), out);  // the last trailer cut
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("ends early"), std::string::npos) << s.error().to_string();
}

TEST(WriteFileAtomically, ReplacesWholeAndLeavesNoTemporaries) {
  test::TempDir dir;
  std::string path = dir.file("out.json");
  dir.write("out.json", "old");
  ASSERT_TRUE(write_file_atomically(path, "new content").ok());
  auto buf = InputBuffer::open(path);
  ASSERT_TRUE(buf.ok());
  EXPECT_EQ(buf->bytes(), "new content");
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IRGRP, 0u);  // not mkstemp's 0600
}

TEST(WriteFileAtomically, FailsIntoMissingDirectory) {
  test::TempDir dir;
  Status s = write_file_atomically(dir.file("no/such/dir/out.json"), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().to_string().find("cannot create output"), std::string::npos);
}

std::string content_of(const std::string& path) {
  auto buf = InputBuffer::open(path);
  return buf.ok() ? std::string(buf->bytes()) : "<" + buf.error().to_string() + ">";
}

std::size_t entries(const test::TempDir& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++n;
  return n;
}

TEST(WriteFileAtomically, WritesThroughASymlinkToItsTarget) {
  test::TempDir dir;
  std::filesystem::create_directory(dir.file("real"));
  dir.write("real/out.json", "old");
  std::filesystem::create_symlink("real/out.json", dir.file("link.json"));
  std::filesystem::create_symlink("link.json", dir.file("link2.json"));  // a chain
  ASSERT_TRUE(write_file_atomically(dir.file("link2.json"), "new").ok());
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("link.json")));
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("link2.json")));
  EXPECT_EQ(content_of(dir.file("real/out.json")), "new");
  // The temporary file lived beside the target, and is gone.
  std::size_t in_real = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.file("real"))) ++in_real;
  EXPECT_EQ(in_real, 1u);
  // A dangling link names the file to create.
  std::filesystem::create_symlink("real/new.json", dir.file("dangling.json"));
  ASSERT_TRUE(write_file_atomically(dir.file("dangling.json"), "created").ok());
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("dangling.json")));
  EXPECT_EQ(content_of(dir.file("real/new.json")), "created");
}

TEST(WriteFileAtomically, KeepsTheModeOfTheFileItReplaces) {
  test::TempDir dir;
  dir.write("out.md", "old");
  ASSERT_EQ(chmod(dir.file("out.md").c_str(), 0640), 0);
  ASSERT_TRUE(write_file_atomically(dir.file("out.md"), "new").ok());
  struct stat st {};
  ASSERT_EQ(stat(dir.file("out.md").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(content_of(dir.file("out.md")), "new");
}

TEST(WriteFileAtomically, WritesIntoAFifoWithoutReplacingIt) {
  test::TempDir dir;
  std::string fifo = dir.file("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto reader = std::async(std::launch::async, [&] {
    std::string got;
    int fd = ::open(fifo.c_str(), O_RDONLY);
    char buf[256];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return got;
  });
  ASSERT_TRUE(write_file_atomically(fifo, "through the pipe").ok());
  EXPECT_EQ(reader.get(), "through the pipe");
  struct stat st {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(entries(dir), 1u);
}

TEST(WriteFileAtomically, WritesIntoACharacterDeviceWithoutReplacingIt) {
  test::TempDir dir;
  std::string null_device = dir.file("mynull");
  if (mknod(null_device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "cannot create a device node here (" << std::strerror(errno)
                 << "); the same code path is covered by the FIFO test";
  }
  ASSERT_TRUE(write_file_atomically(null_device, std::string(6659, 'x')).ok());
  struct stat st {};
  ASSERT_EQ(lstat(null_device.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device was replaced by a regular file";
  EXPECT_EQ(entries(dir), 1u);
  // Through a symlink too.
  std::filesystem::create_symlink(null_device, dir.file("link"));
  ASSERT_TRUE(write_file_atomically(dir.file("link"), "x").ok());
  ASSERT_EQ(lstat(null_device.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(WriteFileAtomically, RefusesADirectoryAndReportsADeviceThatFails) {
  test::TempDir dir;
  std::filesystem::create_directory(dir.file("sub"));
  Status s = write_file_atomically(dir.file("sub"), "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("is a directory"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_directory(dir.file("sub")));
  if (access("/dev/full", W_OK) == 0) {
    Status full = write_file_atomically("/dev/full", "x");
    ASSERT_FALSE(full.ok());
    EXPECT_EQ(full.error().file, "/dev/full");
    EXPECT_NE(full.error().message.find("cannot write output"), std::string::npos);
  }
}

TEST(SameFile, ThroughLinksAndNotForDifferentFiles) {
  test::TempDir dir;
  dir.write("a.csv", "a");
  dir.write("b.csv", "b");
  std::filesystem::create_symlink("a.csv", dir.file("l.csv"));
  EXPECT_TRUE(same_file(dir.file("a.csv"), dir.file("l.csv")));
  EXPECT_TRUE(same_file(dir.file("a.csv"), dir.path().string() + "/./a.csv"));
  EXPECT_FALSE(same_file(dir.file("a.csv"), dir.file("b.csv")));
  EXPECT_FALSE(same_file(dir.file("a.csv"), dir.file("missing.csv")));
}

// Inputs that never end or inflate without bound are refused early, naming the file and the
// limit, instead of growing until memory runs out.
TEST(InputBuffer, RefusesDevicesEvenBehindASymlink) {
  test::TempDir dir;
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    std::filesystem::remove(dir.file("trace.json"));
    std::filesystem::create_symlink(device, dir.file("trace.json"));
    auto buf = InputBuffer::open(dir.file("trace.json"));
    ASSERT_FALSE(buf.ok()) << device;
    EXPECT_EQ(buf.error().file, dir.file("trace.json"));
    EXPECT_NE(buf.error().message.find("is a device"), std::string::npos) << buf.error().message;
  }
}

TEST(InputBuffer, ReadsAPipe) {
  test::TempDir dir;
  std::string fifo = dir.file("pipe.csv");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto writer = std::async(std::launch::async, [&] {
    int fd = ::open(fifo.c_str(), O_WRONLY);
    const std::string text = "a,b\n1,2\n";
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
  });
  auto buf = InputBuffer::open(fifo);
  ASSERT_TRUE(writer.get());
  ASSERT_TRUE(buf.ok()) << buf.error().to_string();
  EXPECT_EQ(buf->bytes(), "a,b\n1,2\n");
}

TEST(InputBuffer, RefusesAGzipBombBeforeInflatingIt) {
  test::TempDir dir;
  // One repeated line (a CSV with a huge line) 16 MiB past where the ratio is checked: about
  // 80 KB of gzip. (200 MiB took this test 23 s under the sanitizers.)
  dir.write("bomb.csv.gz", gzip(std::string(kGzipRatioFrom + (std::size_t{16} << 20), 'x') + "\n"));
  auto buf = InputBuffer::open(dir.file("bomb.csv.gz"));
  ASSERT_FALSE(buf.ok());
  EXPECT_EQ(buf.error().file, dir.file("bomb.csv.gz"));
  EXPECT_NE(buf.error().message.find("inflates more than 200 times"), std::string::npos) << buf.error().message;
  // Streamed, the same limit.
  auto reader = open_gzip_reader(dir.file("bomb.csv.gz"), 1 << 20, 1 << 20, true);
  ASSERT_TRUE(reader.ok());
  std::string error;
  for (int i = 0; i < 1000 && error.empty(); ++i) {
    auto window = (*reader)->next({});
    if (!window) error = window.error().message;
    if ((*reader)->at_end()) break;
  }
  EXPECT_NE(error.find("inflates more than 200 times"), std::string::npos) << error;
  // Real exports compress far less: every gzip fixture reads.
  EXPECT_TRUE(InputBuffer::open(test::fixture("pytorch/llama_torch_trace.json.gz")).ok());
}

// A mapping holds the file's bytes; giving back the pages before an offset leaves the bytes
// after it readable (the ncu raw reader releases what it has parsed); no mapping where there is
// no regular file with bytes in it.
TEST(FileMapping, BytesAndReleasingThePagesBehind) {
  test::TempDir dir;
  std::string text;
  for (int i = 0; i < 100000; ++i) text += std::to_string(i) + "\n";
  dir.write("big.txt", text);
  auto file = FileMapping::open(dir.file("big.txt"));
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->bytes(), text);
  const std::size_t at = 3 * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)) + 17;
  file->release_before(at);
  EXPECT_EQ(file->bytes().substr(at - 17), text.substr(at - 17));
  file->release_before(at / 2);  // behind what is released already: nothing to do
  file->release_before(text.size() + 100);
  FileMapping moved(std::move(*file));
  dir.write("empty.txt", "");
  EXPECT_FALSE(FileMapping::open(dir.file("empty.txt")).has_value());
  EXPECT_FALSE(FileMapping::open(dir.path().string()).has_value());
  EXPECT_FALSE(FileMapping::open(dir.file("missing.txt")).has_value());
}

TEST(InputBuffer, GzipErrorsNameTheLineAndTheCompressedOffset) {
  test::TempDir dir;
  std::string text;
  for (int i = 1; i <= 5000; ++i) text += "line " + std::to_string(i * 7919 % 10007) + "\n";
  const std::string gz = gzip(text);
  dir.write("cut.csv.gz", gz.substr(0, gz.size() / 2));
  auto buf = InputBuffer::open(dir.file("cut.csv.gz"));
  ASSERT_FALSE(buf.ok());
  EXPECT_GT(buf.error().line, 1);
  EXPECT_LT(buf.error().line, 5000);
  EXPECT_NE(buf.error().message.find("(compressed byte "), std::string::npos) << buf.error().message;
}

}  // namespace
}  // namespace kernlens
