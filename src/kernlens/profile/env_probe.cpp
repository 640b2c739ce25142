#include "kernlens/profile/env_probe.h"

#include <fmt/format.h>

#include "kernlens/common/ascii.h"
#include "kernlens/profile/process.h"

namespace kernlens::profile {
namespace {

constexpr std::int64_t kEnvProbeTimeoutNs = 60'000'000'000;  // importing torch takes seconds

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    std::size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

Result<std::vector<GpuInfo>> parse_nvidia_smi_query(std::string_view csv_noheader) {
  std::vector<GpuInfo> gpus;
  std::int64_t line_number = 0;
  for (std::string_view line : split(csv_noheader, '\n')) {
    ++line_number;
    if (trim_blanks(line).empty()) continue;
    auto fields = split(line, ',');
    if (fields.size() != 4) {
      return make_error("nvidia-smi", line_number,
                        fmt::format("expected 4 fields (name, driver_version, memory.total, uuid), got {}",
                                    fields.size()));
    }
    gpus.push_back({std::string(trim_blanks(fields[0])), std::string(trim_blanks(fields[1])), std::string(trim_blanks(fields[2])),
                    std::string(trim_blanks(fields[3]))});
  }
  if (gpus.empty()) return make_error("nvidia-smi", 0, "no GPU listed");
  return gpus;
}

std::optional<std::string> parse_driver_cuda_version(std::string_view banner) {
  constexpr std::string_view key = "CUDA Version:";
  auto at = banner.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = trim_blanks(banner.substr(at + key.size()));
  std::size_t end = 0;
  while (end < rest.size() && (is_ascii_digit(rest[end]) || rest[end] == '.')) ++end;
  if (end == 0) return std::nullopt;
  return std::string(rest.substr(0, end));
}

Result<PythonInfo> parse_python_probe(std::string_view output) {
  PythonInfo info;
  for (std::string_view line : split(output, '\n')) {
    line = trim_blanks(line);
    auto space = line.find(' ');
    if (space == std::string_view::npos) continue;
    std::string_view key = line.substr(0, space), value = trim_blanks(line.substr(space + 1));
    if (key == "python") info.python_version = value;
    if (key == "torch") info.torch_version = std::string(value);
    if (key == "torch_cuda" && value != "None") info.torch_cuda = std::string(value);
  }
  if (info.python_version.empty()) return make_error("python probe", 0, "no 'python VERSION' line");
  return info;
}

bool is_python_interpreter(std::string_view program) {
  if (auto slash = program.rfind('/'); slash != std::string_view::npos) program.remove_prefix(slash + 1);
  if (!program.starts_with("python")) return false;
  for (char c : program.substr(6)) {
    if (!is_ascii_digit(c) && c != '.') return false;
  }
  return true;
}

EnvironmentProbe::EnvironmentProbe(const std::vector<std::string>& command) {
  if (auto smi = find_executable("nvidia-smi")) {
    smi_query_ = PendingCapture::start({*smi, std::string(kNvidiaSmiQuery), "--format=csv,noheader"}, kEnvProbeTimeoutNs);
    smi_banner_ = PendingCapture::start({*smi}, kEnvProbeTimeoutNs);
  }
  if (!command.empty() && is_python_interpreter(command.front())) {
    python_ = command.front();
    python_probe_ = PendingCapture::start({python_, "-c", std::string(kPythonProbe)}, kEnvProbeTimeoutNs);
  }
}

nlohmann::ordered_json EnvironmentProbe::finish() {
  nlohmann::ordered_json env = nlohmann::ordered_json::object();
  std::vector<std::string> notes;
  if (smi_query_) {
    auto query = finish_capture(*smi_query_);
    auto gpus = query && query->result.succeeded() ? parse_nvidia_smi_query(query->stdout_text)
                                                   : Result<std::vector<GpuInfo>>(make_error("nvidia-smi", 0, "failed"));
    if (gpus) {
      env["driver_version"] = gpus->front().driver_version;
      for (const auto& g : *gpus) {
        env["gpus"].push_back({{"name", g.name}, {"memory_total", g.memory_total}, {"uuid", g.uuid}});
      }
    } else {
      notes.push_back("nvidia-smi: " + gpus.error().to_string());
    }
    auto banner = finish_capture(*smi_banner_);
    if (auto cuda = banner ? parse_driver_cuda_version(banner->stdout_text) : std::nullopt) {
      env["driver_cuda_version"] = *cuda;
    }
  } else {
    notes.push_back("nvidia-smi not found on PATH: no driver version");
  }
  if (python_probe_) {
    auto run = finish_capture(*python_probe_);
    auto info = run && run->result.succeeded() ? parse_python_probe(run->stdout_text)
                                              : Result<PythonInfo>(make_error(python_, 0, "did not run"));
    if (info) {
      env["python_version"] = info->python_version;
      if (info->torch_version) env["torch_version"] = *info->torch_version;
      if (info->torch_cuda) env["torch_cuda"] = *info->torch_cuda;
    } else {
      notes.push_back("python: " + info.error().to_string());
    }
  }
  if (!notes.empty()) env["notes"] = notes;
  return env;
}

}  // namespace kernlens::profile
