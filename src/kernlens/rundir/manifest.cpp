#include "kernlens/rundir/manifest.h"

#include <algorithm>
#include <array>
#include <fstream>

#include <fmt/format.h>

#include "kernlens/common/file.h"

namespace kernlens::rundir {
namespace {

constexpr std::array<std::string_view, 9> kEnvPrefixes = {
    "CUDA_", "NVIDIA_", "NCCL_", "PYTORCH_", "TORCH", "OMPI_COMM_WORLD_", "PMI_", "SLURM_", "NSYS_"};
constexpr std::array<std::string_view, 6> kEnvNames = {
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "LD_LIBRARY_PATH", "LD_PRELOAD"};
// A recorded manifest is shared with colleagues: never copy what may be a credential.
constexpr std::array<std::string_view, 5> kSecretWords = {"TOKEN", "SECRET", "PASSWORD", "KEY", "CREDENTIAL"};

bool worth_recording(std::string_view name) {
  for (auto word : kSecretWords) {
    if (name.find(word) != std::string_view::npos) return false;
  }
  for (auto prefix : kEnvPrefixes) {
    if (name.starts_with(prefix)) return true;
  }
  for (auto exact : kEnvNames) {
    if (name == exact) return true;
  }
  return false;
}

nlohmann::ordered_json tool_run_json(const ToolRun& run) {
  nlohmann::ordered_json j;
  j["step"] = run.step;
  j["argv"] = run.argv;
  j["exit_code"] = run.exit_code ? nlohmann::ordered_json(*run.exit_code) : nlohmann::ordered_json(nullptr);
  if (run.signal) j["signal"] = *run.signal;
  if (run.timed_out) j["timed_out"] = true;
  if (run.interrupted) j["interrupted"] = true;
  if (run.stopped) j["stopped"] = true;
  j["wall_ns"] = run.wall_ns;
  if (!run.signals_sent.empty()) j["signals_sent"] = run.signals_sent;
  if (run.kernels_profiled > 0) j["kernels_profiled"] = run.kernels_profiled;
  if (run.first_kernel_ns) j["first_kernel_ns"] = *run.first_kernel_ns;
  if (run.last_kernel_ns) j["last_kernel_ns"] = *run.last_kernel_ns;
  if (!run.stdout_log.empty()) j["stdout_log"] = run.stdout_log;
  if (!run.stderr_log.empty()) j["stderr_log"] = run.stderr_log;
  return j;
}

}  // namespace

std::map<std::string, std::string> env_subset(char** environ_list) {
  std::map<std::string, std::string> out;
  for (char** e = environ_list; e && *e; ++e) {
    std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    if (worth_recording(entry.substr(0, eq))) out.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return out;
}

nlohmann::ordered_json manifest_json(const Manifest& m) {
  nlohmann::ordered_json j;
  j["schema"] = kManifestSchema;
  j["run_id"] = m.run_id;
  j["status"] = m.status;
  if (!m.status_reason.empty()) j["status_reason"] = m.status_reason;
  j["command"] = m.command;
  j["cwd"] = m.cwd;
  j["env"] = m.env;
  j["tools"] = m.tools;
  j["clock_control"] = m.clock_control;
  j["options"] = m.options;
  if (!m.tags.empty()) {
    auto& tags = j["tags"] = nlohmann::ordered_json::object();
    for (const auto& [key, value] : m.tags) tags[key] = value;
  }
  if (!m.discovery.empty()) j["discovery"] = m.discovery;
  j["step_wall_ns"] = m.step_wall_ns;
  auto& timings = j["timings"] = nlohmann::ordered_json::object();
  timings["total_ns"] = m.total_ns;
  auto& steps = timings["steps"] = nlohmann::ordered_json::array();
  for (const auto& t : m.timings) steps.push_back({{"step", t.step}, {"wall_ns", t.wall_ns}});
  if (!m.kept.empty()) j["kept"] = m.kept;
  auto& runs = j["runs"] = nlohmann::ordered_json::array();
  for (const auto& r : m.runs) runs.push_back(tool_run_json(r));
  return j;
}

std::string manifest_text(const nlohmann::ordered_json& manifest) {
  return manifest.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

Status write_manifest(const RunDir& dir, const Manifest& manifest) {
  return write_file_atomically(dir.manifest().string(), manifest_text(manifest_json(manifest)));
}

namespace {

std::vector<std::string> strings_of(const nlohmann::ordered_json& j) {
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const auto& s : j) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

std::string string_at(const nlohmann::ordered_json& j, std::string_view key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void set_tag(Tags& tags, std::string key, std::string value) {
  for (auto& [k, v] : tags) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  tags.emplace_back(std::move(key), std::move(value));
}

// "tags": an object of strings (a number is taken as its text), or the list of "KEY=VALUE"
// strings as given on the command line.
Tags read_tags(const nlohmann::ordered_json& j) {
  Tags tags;
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (value.is_string()) set_tag(tags, key, value.get<std::string>());
      if (value.is_number()) set_tag(tags, key, value.dump());
    }
  } else if (j.is_array()) {
    for (const auto& text : strings_of(j)) {
      if (auto eq = text.find('='); eq != std::string::npos && eq > 0) set_tag(tags, text.substr(0, eq), text.substr(eq + 1));
    }
  }
  return tags;
}

std::map<std::string, std::string> string_map(const nlohmann::ordered_json& j) {
  std::map<std::string, std::string> out;
  if (!j.is_object()) return out;
  for (const auto& [key, value] : j.items()) {
    if (value.is_string()) out.emplace(key, value.get<std::string>());
  }
  return out;
}

nlohmann::ordered_json object_at(const nlohmann::ordered_json& j, std::string_view key) {
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : nlohmann::ordered_json::object();
}

}  // namespace

std::string Manifest::discovery_method() const { return string_at(options, "discovery"); }

std::vector<std::string> Manifest::nvtx_include() const {
  auto it = options.find("nvtx_include");
  return it != options.end() ? strings_of(*it) : std::vector<std::string>{};
}

int Manifest::repeat() const {
  auto it = options.find("repeat");
  return it != options.end() && it->is_number_integer() ? std::max(1, it->get<int>()) : 1;
}

std::optional<std::string> Manifest::tag(std::string_view key) const {
  for (const auto& [k, v] : tags) {
    if (k == key) return v;
  }
  return std::nullopt;
}

std::string Manifest::tool(const std::string& pointer) const {
  const nlohmann::ordered_json::json_pointer at(pointer);
  return tools.contains(at) && tools[at].is_string() ? tools[at].get<std::string>() : std::string();
}

Result<Manifest> read_manifest(const std::string& dir) {
  const std::string path = manifest_path(dir);
  nlohmann::ordered_json j;
  try {
    std::ifstream in(path);
    j = nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return make_error(path, 0, fmt::format("not a kernlens manifest: {}", e.what()));
  }
  if (j.is_object() && j.value("schema", "") == kRanksManifestSchema) {
    return make_error(dir, 0, fmt::format("a multi-rank run: give one rank's run directory ({}/rank-0, ...); "
                                          "manifest.json says which rank ran what", dir));
  }
  if (!j.is_object() || j.value("schema", "") != kManifestSchema) {
    return make_error(path, 0, fmt::format("not a kernlens manifest (schema {} expected)", kManifestSchema));
  }
  Manifest m;
  m.run_id = string_at(j, "run_id");
  m.status = string_at(j, "status");
  m.status_reason = string_at(j, "status_reason");
  m.command = strings_of(j.value("command", nlohmann::ordered_json::array()));
  m.cwd = string_at(j, "cwd");
  m.env = string_map(object_at(j, "env"));
  m.tools = object_at(j, "tools");
  m.clock_control = string_at(j, "clock_control");
  m.options = object_at(j, "options");
  m.tags = read_tags(j.value("tags", nlohmann::ordered_json()));
  m.discovery = object_at(j, "discovery");
  m.kept = strings_of(j.value("kept", nlohmann::ordered_json::array()));
  return m;
}

}  // namespace kernlens::rundir
