#include "kernlens/common/file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <filesystem>

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

// Everything a GzipChunkReader hands out, less the carried tails: the file's inflated bytes.
Result<std::string> stream_all(const std::string& path, std::size_t chunk, std::size_t carry) {
  auto reader = GzipChunkReader::open(path, chunk, carry);
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

TEST(GzipChunkReader, WindowsOfConcatenatedMembersAndTheSameErrors) {
  test::TempDir dir;
  std::string data;
  for (int i = 0; data.size() < 300000; ++i) data += "line " + std::to_string(i * 7919 % 100003) + "\n";
  dir.write("two.gz", gzip(data.substr(0, 100000)) + gzip(data.substr(100000)));
  auto all = stream_all(dir.file("two.gz"), 4096, 1024);
  ASSERT_TRUE(all.ok()) << all.error().to_string();
  EXPECT_EQ(*all, data);
  auto head = read_gzip_head(dir.file("two.gz"), 1000);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(*head, data.substr(0, 1000));

  const std::string gz = gzip(data);
  dir.write("cut.gz", gz.substr(0, gz.size() / 2));
  dir.write("corrupt.gz", gz.substr(0, 20) + std::string(200, 'x'));
  for (const auto& [file, message] : {std::pair{"cut.gz", "gzip data ends early: the file is truncated"},
                                      std::pair{"corrupt.gz", "corrupt gzip data"}}) {
    auto r = stream_all(dir.file(file), 4096, 1024);
    ASSERT_FALSE(r.ok()) << file;
    EXPECT_NE(r.error().message.find(message), std::string::npos) << r.error().to_string();
    EXPECT_EQ(r.error().file, dir.file(file));
  }
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

}  // namespace
}  // namespace kernlens
