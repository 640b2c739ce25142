#include "kernlens/rundir/run_key.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernlens/rundir/layout.h"
#include "kernlens/rundir/manifest.h"

namespace kernlens::rundir {
namespace fs = std::filesystem;
namespace {

constexpr std::uint64_t kFnvOffset = 1469598103934665603ULL;
constexpr std::uint64_t kFnvPrime = 1099511628211ULL;

void fnv1a(std::uint64_t& hash, std::string_view bytes) {
  for (unsigned char c : bytes) hash = (hash ^ c) * kFnvPrime;
}

// A file's bytes as stored, read in one call (not byte by byte through a stream iterator,
// which cost as much as hashing them: the run key is computed before every ingest).
Result<std::string> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return make_error(path, 0, "cannot read the file");
  std::string bytes(static_cast<std::size_t>(std::max<std::streamoff>(in.tellg(), 0)), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) return make_error(path, 0, "cannot read the file");
  return bytes;
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

Result<std::string> run_key(const std::string& path) {
  std::uint64_t hash = kFnvOffset;
  if (!is_run_directory(path)) {
    auto bytes = file_bytes(path);
    if (!bytes) return bytes.error();
    fnv1a(hash, *bytes);
    return fmt::format("file-{:016x}", hash);
  }
  std::string id = "run";
  for (const auto& relative : measured_files(path)) {
    auto bytes = file_bytes((fs::path(path) / relative).string());
    if (!bytes) return bytes.error();
    std::string content = std::move(bytes).value();
    if (relative == kManifestFile) std::tie(content, id) = keyed_manifest(std::move(content));
    fnv1a(hash, relative);
    fnv1a(hash, std::string_view("\0", 1));
    fnv1a(hash, content);
  }
  return fmt::format("{}-{:016x}", id, hash);
}

Result<std::string> run_key(const std::vector<std::string>& inputs) {
  if (inputs.size() == 1) return run_key(inputs.front());
  std::uint64_t hash = kFnvOffset;
  for (const auto& input : inputs) {
    auto key = run_key(input);
    if (!key) return key.error();
    fnv1a(hash, *key);
    fnv1a(hash, std::string_view("\0", 1));
  }
  return fmt::format("ranks-{:016x}", hash);
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

}  // namespace kernlens::rundir
