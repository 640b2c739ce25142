#include "kernlens/rundir/run_key.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <xxhash.h>

#include "kernlens/rundir/layout.h"
#include "kernlens/rundir/manifest.h"

namespace kernlens::rundir {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kCurrentMarker = "xxh3.";

// The first form's hash, kept only to find runs in databases written before (run_key.h).
class Fnv1a {
 public:
  void update(std::string_view bytes) {
    for (unsigned char c : bytes) hash_ = (hash_ ^ c) * kPrime;
  }
  std::uint64_t digest() const { return hash_; }

 private:
  static constexpr std::uint64_t kPrime = 1099511628211ULL;
  std::uint64_t hash_ = 1469598103934665603ULL;
};

// XXH3-64 (Debian's libxxhash) over the bytes given in pieces, and FNV-1a beside it when asked.
class KeyHash {
 public:
  explicit KeyHash(bool with_legacy) : state_(XXH3_createState()) {
    XXH3_64bits_reset(state_.get());
    if (with_legacy) legacy_.emplace();
  }
  void update(std::string_view bytes) {
    XXH3_64bits_update(state_.get(), bytes.data(), bytes.size());
    if (legacy_) legacy_->update(bytes);
  }
  RunKeys keys(std::string_view id) const {
    return {fmt::format("{}-{}{:016x}", id, kCurrentMarker, XXH3_64bits_digest(state_.get())),
            legacy_ ? fmt::format("{}-{:016x}", id, legacy_->digest()) : std::string()};
  }

 private:
  struct Free {
    void operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
  };
  std::unique_ptr<XXH3_state_t, Free> state_;
  std::optional<Fnv1a> legacy_;
};

// A file's bytes as stored, read in one call (manifest.json, which is parsed).
Result<std::string> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return make_error(path, 0, "cannot read the file");
  std::string bytes(static_cast<std::size_t>(std::max<std::streamoff>(in.tellg(), 0)), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) return make_error(path, 0, "cannot read the file");
  return bytes;
}

// Hashes a file's bytes as stored, read through one buffer that every call reuses: a fresh
// buffer per file (the exports are hundreds of KB each) cost more in page faults than the
// hashing (the run key is computed before every ingest, over every file of the run).
Status hash_file(const std::string& path, KeyHash& hash) {
  constexpr std::size_t kBufferBytes = 1 << 20;
  thread_local std::unique_ptr<char[]> buffer(new char[kBufferBytes]);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(path, 0, "cannot read the file");
  ssize_t got = 0;
  while ((got = ::read(fd, buffer.get(), kBufferBytes)) > 0) {
    hash.update({buffer.get(), static_cast<std::size_t>(got)});
  }
  ::close(fd);
  if (got < 0) return make_error(path, 0, "cannot read the file");
  return ok_status();
}

// The files of a run directory that hold its measurements, sorted by relative path.
std::vector<std::string> measured_files(const fs::path& dir) {
  std::vector<std::string> files = {std::string(kManifestFile)};
  for (const char* sub : {"discovery", "deep"}) {
    std::error_code ec;
    if (!fs::is_directory(dir / sub, ec)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(dir / sub, ec)) {
      if (entry.is_regular_file()) files.push_back(fs::relative(entry.path(), dir).generic_string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// manifest.json as kernlens writes it (manifest_text()) without its tags, and its run_id; the
// bytes as they are when they are no JSON object.
std::pair<std::string, std::string> keyed_manifest(std::string bytes) {
  auto j = nlohmann::ordered_json::parse(bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return {std::move(bytes), "run"};
  std::string id = j.contains("run_id") && j["run_id"].is_string() ? j["run_id"].get<std::string>() : "run";
  j.erase("tags");
  return {manifest_text(j), id};
}

}  // namespace

Result<RunKeys> run_keys(const std::string& path, bool with_legacy) {
  KeyHash hash(with_legacy);
  if (!is_run_directory(path)) {
    if (Status s = hash_file(path, hash); !s) return s.error();
    return hash.keys("file");
  }
  std::string id = "run";
  for (const auto& relative : measured_files(path)) {
    const std::string file = (fs::path(path) / relative).string();
    hash.update(relative);
    hash.update(std::string_view("\0", 1));
    if (relative != kManifestFile) {
      if (Status s = hash_file(file, hash); !s) return s.error();
      continue;
    }
    auto bytes = file_bytes(file);
    if (!bytes) return bytes.error();
    std::string content;
    std::tie(content, id) = keyed_manifest(std::move(bytes).value());
    hash.update(content);
  }
  return hash.keys(id);
}

Result<std::string> run_key(const std::string& path) {
  auto keys = run_keys(path, false);
  if (!keys) return keys.error();
  return std::move(keys->key);
}

Result<RunKeys> run_keys(const std::vector<std::string>& inputs, bool with_legacy) {
  if (inputs.size() == 1) return run_keys(inputs.front(), with_legacy);
  KeyHash hash(with_legacy);
  Fnv1a legacy;  // the first form hashes the inputs' first-form keys
  for (const auto& input : inputs) {
    auto keys = run_keys(input, with_legacy);
    if (!keys) return keys.error();
    hash.update(keys->key);
    hash.update(std::string_view("\0", 1));
    legacy.update(keys->legacy_key);
    legacy.update(std::string_view("\0", 1));
  }
  RunKeys keys = hash.keys("ranks");
  if (with_legacy) keys.legacy_key = fmt::format("ranks-{:016x}", legacy.digest());
  return keys;
}

Result<std::string> run_key(const std::vector<std::string>& inputs) {
  auto keys = run_keys(inputs, false);
  if (!keys) return keys.error();
  return std::move(keys->key);
}

std::vector<std::string> run_inputs(const std::string& spec) {
  std::error_code ec;
  if (spec.find(',') == std::string::npos || fs::exists(spec, ec)) return {spec};
  std::vector<std::string> inputs;
  std::string_view rest = spec;
  for (std::size_t comma; (comma = rest.find(',')) != std::string_view::npos; rest.remove_prefix(comma + 1)) {
    inputs.emplace_back(rest.substr(0, comma));
  }
  inputs.emplace_back(rest);
  return inputs;
}

std::string_view current_key_glob() {
  return "*-xxh3.[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]"
         "[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]";
}

}  // namespace kernlens::rundir
