// `kernlens names` streamed: windows of any size give the lines that classifying each name on
// its own gives, the cache never changes a line, and memory does not follow the input.
#include "kernlens/names/name_lines.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "test_util.h"

namespace kernlens::names {
namespace {

// Every fixture name (mangled and not), each twice, with a CRLF, blank lines and a name
// holding control characters.
std::string fixture_lines() {
  std::string text;
  for (const char* file : {"ncu_gemm_zoo.txt", "ncu_gemm_zoo_mangled.txt", "torch_llama.txt", "ncu_llama_flash_mangled.txt"}) {
    std::ifstream in(test::fixture("names/" + std::string(file)));
    std::stringstream s;
    s << in.rdbuf();
    text += s.str() + "\n  \n" + s.str();
  }
  return text + "kernel\twith\x01" "controls\r\n\r\nlast_name_without_a_break";
}

// The names of `text`, one a line, as `kernlens names` reads them (the reference).
std::vector<std::string_view> names_of(std::string_view text) {
  std::vector<std::string_view> names;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view name = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!name.empty() && name.back() == '\r') name.remove_suffix(1);
    if (name.find_first_not_of(" \t") != std::string_view::npos) names.push_back(name);
  }
  return names;
}

// What classifying each line on its own gives.
std::string one_by_one(std::string_view text, const KernelClassifier& classifier) {
  std::string out;
  for (std::string_view name : names_of(text)) append_classified_line(out, name, classifier.classify(name));
  return out;
}

Result<std::string> streamed(const std::string& path, std::size_t chunk, std::size_t carry, bool ahead,
                             std::size_t batch, unsigned threads = 1) {
  auto reader = ChunkReader::open(path, chunk, carry, ahead);
  if (!reader) return reader.error();
  std::string out;
  std::size_t batches = 0;
  Status s = classify_name_lines(**reader, test::builtin_classifier(), [&](std::string_view b) {
    ++batches;
    out += b;
    return ok_status();
  }, batch, threads);
  if (!s) return s.error();
  EXPECT_GE(batches, batch < out.size() ? 2u : 1u);
  return out;
}

TEST(NameLines, AnyWindowGivesTheLinesOfEachNameAlone) {
  test::TempDir dir;
  const std::string text = fixture_lines();
  dir.write("names.txt", text);
  const std::string expected = one_by_one(text, test::builtin_classifier());
  EXPECT_NE(expected.find("kernel\\twith\\x01controls\t"), std::string::npos);
  EXPECT_NE(expected.find("last_name_without_a_break\t"), std::string::npos);
  for (std::size_t chunk : {std::size_t{7}, std::size_t{4096}, std::size_t{1} << 20}) {
    for (bool ahead : {false, true}) {
      auto out = streamed(dir.file("names.txt"), chunk, 1 << 16, ahead, 1000);
      ASSERT_TRUE(out.ok()) << out.error().to_string();
      EXPECT_EQ(*out, expected) << "chunk " << chunk;
    }
  }
}

TEST(NameLines, AnyNumberOfThreadsGivesTheSameLinesInOrder) {
  // Large enough that a 1 MiB window is cut into parts of at least 64 KiB for each thread.
  test::TempDir dir;
  std::string text;
  for (int i = 0; text.size() < (std::size_t{3} << 20); ++i) text += fixture_lines() + "\nname_" + std::to_string(i) + "\n";
  dir.write("names.txt", text);
  const std::string expected = one_by_one(text, test::builtin_classifier());
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    for (std::size_t chunk : {std::size_t{100'000}, std::size_t{1} << 20}) {
      auto out = streamed(dir.file("names.txt"), chunk, 1 << 16, true, 1 << 20, threads);
      ASSERT_TRUE(out.ok()) << out.error().to_string();
      EXPECT_TRUE(*out == expected) << threads << " threads, chunk " << chunk;
    }
  }
}

TEST(NameLines, TheCacheNeverChangesALine) {
  const auto& classifier = test::builtin_classifier();
  NameLineCache one_slot(classifier, 1), many(classifier);
  const std::string text = fixture_lines();
  std::string a, b;
  for (std::string_view name : names_of(text)) {
    a += one_slot.line(name);
    b += many.line(name);
  }
  EXPECT_EQ(a, one_by_one(text, classifier));
  EXPECT_EQ(b, a);
  EXPECT_GT(many.hits(), 0u);  // each name comes twice
}

TEST(NameLines, ANameLongerThanTheCarryIsAnError) {
  test::TempDir dir;
  dir.write("long.txt", "short\n" + std::string(5000, 'x') + "\nshort\n");
  auto out = streamed(dir.file("long.txt"), 64, 1024, false, 1 << 20);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("a record longer than 1024 bytes"), std::string::npos) << out.error().to_string();
}

}  // namespace
}  // namespace kernlens::names
