#include "kernlens/profile/run_dir.h"

#include <algorithm>
#include <array>
#include <ctime>
#include <system_error>

#include <fmt/format.h>

#include "kernlens/common/file.h"

namespace kernlens::profile {
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
  j["wall_ns"] = run.wall_ns;
  if (!run.signals_sent.empty()) j["signals_sent"] = run.signals_sent;
  if (run.kernels_profiled > 0) j["kernels_profiled"] = run.kernels_profiled;
  if (run.first_kernel_ns) j["first_kernel_ns"] = *run.first_kernel_ns;
  if (run.last_kernel_ns) j["last_kernel_ns"] = *run.last_kernel_ns;
  if (!run.stdout_log.empty()) j["stdout_log"] = run.stdout_log;
  if (!run.stderr_log.empty()) j["stderr_log"] = run.stderr_log;
  return j;
}

// A directory `create_run_dir` may replace: a kernlens run directory, or nothing at all.
bool replaceable(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / "manifest.json", ec) || std::filesystem::is_empty(dir, ec);
}

}  // namespace

std::string make_run_id(std::chrono::system_clock::time_point now, std::string_view program) {
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&t, &utc);
  std::string name(program.substr(program.rfind('/') == std::string_view::npos ? 0 : program.rfind('/') + 1));
  for (char& c : name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.';
    if (!keep) c = '_';
  }
  if (name.empty() || name == "." || name == "..") name = "run";
  return fmt::format("{:04}{:02}{:02}-{:02}{:02}{:02}-{}", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                     utc.tm_hour, utc.tm_min, utc.tm_sec, name);
}

Result<RunDir> create_run_dir(const std::filesystem::path& out, const std::string& run_id, bool force_overwrite) {
  RunDir dir{run_id, out / run_id, out / run_id / "discovery", out / run_id / "deep"};
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) return make_error(out.string(), 0, "cannot create the output directory: " + ec.message());
  if (force_overwrite && std::filesystem::is_directory(dir.root, ec)) {
    if (!replaceable(dir.root)) {
      return make_error(dir.root.string(), 0,
                        "exists and is not a kernlens run directory (no manifest.json): -f replaces only a run "
                        "directory");
    }
    std::filesystem::remove_all(dir.root, ec);
    if (ec) return make_error(dir.root.string(), 0, "cannot replace the run directory: " + ec.message());
  }
  if (!std::filesystem::create_directory(dir.root, ec)) {
    if (ec) return make_error(dir.root.string(), 0, "cannot create the run directory: " + ec.message());
    return make_error(dir.root.string(), 0,
                      "the run directory exists already: a run never overwrites another (-f replaces it, "
                      "--run-id names another)");
  }
  for (const auto& sub : {dir.discovery, dir.deep}) {
    if (!std::filesystem::create_directory(sub, ec) && ec) {
      return make_error(sub.string(), 0, "cannot create: " + ec.message());
    }
  }
  return dir;
}

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
  j["schema"] = "kernlens.manifest/1";
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

std::vector<std::string> run_dir_files(const RunDir& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir.root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string relative = std::filesystem::relative(it->path(), dir.root, ec).string();
    if (relative != "manifest.json") files.push_back(std::move(relative));
  }
  std::sort(files.begin(), files.end());
  return files;
}

Status write_manifest(const RunDir& dir, const Manifest& manifest) {
  return write_file_atomically(dir.manifest().string(), manifest_json(manifest).dump(2) + "\n");
}

}  // namespace kernlens::profile
