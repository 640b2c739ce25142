// Helpers shared by the unit tests: fixture paths, file contents, and reading bytes through
// the public reader entry point.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "kernlens/common/file.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/model/profile.h"
#include "kernlens/names/classify.h"

namespace kernlens::test {

// The classifier of the built-in kernel rules, loaded once for all tests.
inline const names::KernelClassifier& builtin_classifier() {
  static const names::KernelClassifier classifier = [] {
    auto loaded = names::KernelClassifier::load({});
    if (!loaded) {
      ADD_FAILURE() << "the built-in kernel rules do not load: " << loaded.error().to_string();
      return std::move(names::KernelClassifier::create({})).value();
    }
    return std::move(loaded).value();
  }();
  return classifier;
}

inline std::string fixture(const std::string& relative) {
  return std::string(KERNLENS_FIXTURES) + "/" + relative;
}

// The bytes of a fixture (gzip inflated), failing the test when unreadable.
inline std::string fixture_bytes(const std::string& relative) {
  auto buf = InputBuffer::open(fixture(relative));
  EXPECT_TRUE(buf.ok()) << (buf.ok() ? "" : buf.error().to_string());
  return buf.ok() ? std::string(buf->bytes()) : std::string();
}

// Reads `bytes` as input "test.csv" into a fresh profile.
struct ReadResult {
  model::Profile profile;
  Status status = ok_status();
};

inline ReadResult read_bytes(const std::string& bytes, const std::string& path = "test.csv") {
  ReadResult r;
  r.status = ingest::read_input_bytes(bytes, path, r.profile);
  return r;
}

inline ReadResult read_fixture(const std::string& relative) {
  ReadResult r;
  r.status = ingest::read_input(fixture(relative), r.profile);
  return r;
}

// A file's bytes as they are on disk ("" when it cannot be read).
inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The path of a run directory under examples/data/runs.
inline std::string example_run(const std::string& name) { return fixture("../../examples/data/runs/" + name); }

// A launch's stage as tests spell it: the push/pop path, then each start/end range in brackets.
inline std::string stage_of(const model::Profile& p, const model::Launch& l) {
  const model::StageKey& key = p.stages[l.stage];
  std::string label = model::push_pop_path(key);
  for (const auto& r : key.start_end) label += " [" + model::range_label(r) + "]";
  return label;
}

// A fresh temporary directory, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kernlens-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  void write(const std::string& name, const std::string& content) const {
    std::ofstream(file(name), std::ios::binary) << content;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace kernlens::test
