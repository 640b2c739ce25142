// Helpers shared by the unit tests: fixture paths, file contents, and reading bytes through
// the public reader entry point.
#pragma once

#include <filesystem>
#include <fstream>
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
