#include "kernlens/common/chunk_reader.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace kernlens {
namespace {

// Consumes every window, carrying the bytes after its last '\n', and returns what the
// caller saw as complete lines: the file itself.
std::string read_by_lines(const std::string& path, std::size_t chunk, std::size_t carry, int* windows) {
  auto reader = ChunkReader::open(path, chunk, carry);
  EXPECT_TRUE(reader.ok());
  std::string seen;
  std::string_view tail;
  *windows = 0;
  while (true) {
    auto window = (*reader)->next(tail);
    EXPECT_TRUE(window.ok()) << window.error().to_string();
    if (!window.ok() || window->empty()) break;
    ++*windows;
    if ((*reader)->at_end()) {
      seen += *window;
      break;
    }
    std::size_t cut = window->rfind('\n');
    cut = cut == std::string_view::npos ? 0 : cut + 1;
    seen += window->substr(0, cut);
    tail = window->substr(cut);
  }
  return seen;
}

TEST(ChunkReader, WindowsWithCarriesRebuildTheFile) {
  test::TempDir dir;
  std::string content;
  for (int i = 0; i < 5000; ++i) content += "line " + std::to_string(i) + std::string(static_cast<std::size_t>(i % 37), 'x') + "\n";
  content += "no newline at the end";
  dir.write("f.txt", content);
  for (std::size_t chunk : {7u, 100u, 4096u, 1u << 20}) {
    int windows = 0;
    EXPECT_EQ(read_by_lines(dir.file("f.txt"), chunk, 4096, &windows), content) << chunk;
    EXPECT_EQ(static_cast<std::size_t>(windows), content.size() / chunk + 1) << chunk;
  }
}

TEST(ChunkReader, EmptyFileAndErrors) {
  test::TempDir dir;
  dir.write("empty.txt", "");
  auto reader = ChunkReader::open(dir.file("empty.txt"), 16, 16);
  ASSERT_TRUE(reader.ok());
  auto window = (*reader)->next({});
  ASSERT_TRUE(window.ok());
  EXPECT_TRUE(window->empty());
  EXPECT_TRUE((*reader)->at_end());
  EXPECT_FALSE(ChunkReader::open(dir.file("missing.txt")).ok());

  dir.write("f.txt", std::string(100, 'a'));
  auto small = ChunkReader::open(dir.file("f.txt"), 10, 8);
  ASSERT_TRUE(small.ok());
  auto first = (*small)->next({});
  ASSERT_TRUE(first.ok());
  auto too_long = (*small)->next(*first);  // 10 bytes of carry, room for 8
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.error().message.find("longer than 8 bytes"), std::string::npos);
}

TEST(ChunkReader, StoppingEarlyJoinsTheLoader) {
  test::TempDir dir;
  dir.write("f.txt", std::string(1 << 20, 'z'));
  for (int i = 0; i < 20; ++i) {
    auto reader = ChunkReader::open(dir.file("f.txt"), 4096, 4096);
    ASSERT_TRUE(reader.ok());
    ASSERT_TRUE((*reader)->next({}).ok());
  }  // destroyed while the loader is mid-file
}

}  // namespace
}  // namespace kernlens
