#include "kernlens/store/run_input.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernlens/analysis/analysis.h"
#include "kernlens/common/text.h"
#include "kernlens/analysis/run_summary.h"
#include "kernlens/profile/run_reader.h"

namespace kernlens::store {
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
  std::vector<std::string> files = {"manifest.json"};
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

std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

bool valid_tag_key(std::string_view key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

void set_tag(model::RunMeta& meta, const std::string& key, const std::string& value) {
  for (auto& [k, v] : meta.tags) {
    if (k == key) {
      v = value;
      return;
    }
  }
  meta.tags.emplace_back(key, value);
}

// The tags with a column of their own fill it. Errors: batch or tokens not an integer.
Status apply_tags(model::RunMeta& meta, const Tags& tags) {
  for (const auto& [key, value] : tags) {
    set_tag(meta, key, value);
    if (key == "model") meta.model = value;
    if (key == "dtype") meta.dtype = value;
    if (key == "batch" || key == "tokens") {
      auto n = parse_int(value);
      if (!n) return make_error("", 0, fmt::format("--tag {}={}: {} must be an integer", key, value, key));
      (key == "batch" ? meta.batch : meta.tokens) = *n;
    }
  }
  return ok_status();
}

std::string json_text(const nlohmann::json& j, const nlohmann::json::json_pointer& at) {
  if (!j.contains(at) || !j[at].is_string()) return "";
  return j[at].get<std::string>();
}

std::string joined(const std::vector<std::string>& argv) {
  return fmt::format("{}", fmt::join(argv, " "));
}

// The manifest's metadata, then what the workload's arguments say.
Result<model::RunMeta> manifest_meta(const std::string& dir) {
  std::string path = (fs::path(dir) / "manifest.json").string();
  auto bytes = file_bytes(path);
  if (!bytes) return bytes.error();
  auto j = nlohmann::json::parse(*bytes, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error(path, 0, "not a JSON object");
  std::vector<std::string> argv;
  if (j.contains("command") && j["command"].is_array()) {
    for (const auto& arg : j["command"]) {
      if (arg.is_string()) argv.push_back(arg.get<std::string>());
    }
  }
  model::RunMeta meta = workload_meta(argv);
  meta.command = joined(argv);
  // `kernlens profile --tag KEY=VALUE`: after what the workload's arguments say, before the
  // --tag of `db ingest` (read_run applies those last).
  if (j.contains("tags") && j["tags"].is_object()) {
    Tags tags;
    for (const auto& [key, value] : j["tags"].items()) {
      if (value.is_string()) tags.emplace_back(key, value.get<std::string>());
    }
    if (Status s = apply_tags(meta, tags); !s) return make_error(path, 0, s.error().message);
  }
  using P = nlohmann::json::json_pointer;
  meta.gpu = json_text(j, P("/tools/gpu"));
  meta.driver = json_text(j, P("/tools/driver"));
  meta.ncu_version = json_text(j, P("/tools/ncu/version"));
  meta.nsys_version = json_text(j, P("/tools/nsys/version"));
  meta.torch_version = json_text(j, P("/tools/torch"));
  meta.cuda_version = json_text(j, P("/env/CUDA_VERSION"));
  if (meta.driver.empty()) meta.driver = json_text(j, P("/env/NVIDIA_DRIVER_VERSION"));
  return meta;
}

// llm_stages.py's flags and defaults (examples/workloads/llm_stages.py).
struct WorkloadFlag {
  std::string_view flag;
  std::string_view tag;
  std::string_view default_value;  // empty: a switch, "1" when given
};
constexpr WorkloadFlag kLlmStagesFlags[] = {
    {"--model", "model", "llama"},       {"--batch", "batch", "4"},
    {"--prompt", "tokens", "256"},       {"--dtype", "dtype", "bf16"},
    {"--decode-steps", "decode_steps", "15"}, {"--sdpa-backend", "sdpa_backend", "default"},
    {"--compile", "compile", ""},
};

std::string flag_value(const std::vector<std::string>& args, const WorkloadFlag& flag) {
  std::string value = flag.default_value.empty() ? "0" : std::string(flag.default_value);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (flag.default_value.empty()) {
      if (args[i] == flag.flag) value = "1";
    } else if (args[i] == flag.flag && i + 1 < args.size()) {
      value = args[i + 1];
    } else if (args[i].rfind(std::string(flag.flag) + "=", 0) == 0) {
      value = args[i].substr(flag.flag.size() + 1);
    }
  }
  return value;
}

}  // namespace

Result<Tags> parse_tags(const std::vector<std::string>& texts) {
  Tags tags;
  for (const auto& text : texts) {
    auto eq = text.find('=');
    std::string key = text.substr(0, eq);
    if (eq == std::string::npos || !valid_tag_key(key)) {
      return make_error("", 0, fmt::format("--tag {}: expected KEY=VALUE, KEY of letters, digits, '_', '-', '.'", text));
    }
    for (const auto& [k, v] : tags) {
      if (k == key) return make_error("", 0, fmt::format("--tag {}: given twice", key));
    }
    tags.emplace_back(key, valid_utf8(text.substr(eq + 1)));  // the one rule of common/text.h
  }
  return tags;
}

Result<std::string> run_key(const std::string& path) {
  std::uint64_t hash = kFnvOffset;
  if (!profile::is_run_directory(path)) {
    auto bytes = file_bytes(path);
    if (!bytes) return bytes.error();
    fnv1a(hash, *bytes);
    return fmt::format("file-{:016x}", hash);
  }
  std::string manifest_bytes;
  for (const auto& relative : measured_files(path)) {
    auto bytes = file_bytes((fs::path(path) / relative).string());
    if (!bytes) return bytes.error();
    fnv1a(hash, relative);
    fnv1a(hash, std::string_view("\0", 1));
    fnv1a(hash, *bytes);
    if (relative == "manifest.json") manifest_bytes = std::move(bytes).value();
  }
  auto manifest = nlohmann::json::parse(manifest_bytes, nullptr, false);
  std::string id = "run";
  if (manifest.is_object() && manifest.contains("run_id") && manifest["run_id"].is_string()) {
    id = manifest["run_id"].get<std::string>();
  }
  return fmt::format("{}-{:016x}", id, hash);
}

model::RunMeta workload_meta(const std::vector<std::string>& argv) {
  model::RunMeta meta;
  auto script = std::find_if(argv.begin(), argv.end(), [](const std::string& a) {
    return fs::path(a).filename() == "llm_stages.py";
  });
  if (script == argv.end()) return meta;
  std::vector<std::string> args(script + 1, argv.end());
  Tags tags = {{"workload", "llm_stages"}};
  for (const auto& flag : kLlmStagesFlags) tags.emplace_back(std::string(flag.tag), flag_value(args, flag));
  // A flag that is not an integer leaves its column empty (the tag keeps what was given).
  for (const auto& [key, value] : tags) {
    set_tag(meta, key, value);
    if (key == "model") meta.model = value;
    if (key == "dtype") meta.dtype = value;
    if (key == "batch") meta.batch = parse_int(value);
    if (key == "tokens") meta.tokens = parse_int(value);
  }
  return meta;
}

Result<model::RunRecord> read_run(const std::string& path, const Tags& tags,
                                  const names::KernelClassifier& classifier, std::string key) {
  model::RunMeta meta;
  if (profile::is_run_directory(path)) {
    auto m = manifest_meta(path);
    if (!m) return m.error();
    meta = std::move(m).value();
  }
  if (key.empty()) {
    auto computed = run_key(path);
    if (!computed) return computed.error();
    key = std::move(computed).value();
  }
  meta.run_key = std::move(key);
  meta.source_path = path;
  if (Status s = apply_tags(meta, tags); !s) return s.error();

  model::Profile profile;
  const ingest::ReadOptions read_options = profile::analysis_read_options();
  if (Status s = profile::read_profile_input(path, profile, read_options); !s) return s.error();
  ingest::reconcile_inputs(profile);
  auto analyzed = analysis::analyze(profile, classifier, analysis::AnalysisOptions{});
  if (!analyzed) return analyzed.error();
  model::RunRecord run = analysis::summarize_run(profile, *analyzed);
  meta.source_format = profile.inputs.empty() ? "" : profile.inputs.front().format;
  if (meta.gpu.empty() && run.device) meta.gpu = run.device->name;
  run.meta = std::move(meta);
  return run;
}

}  // namespace kernlens::store
