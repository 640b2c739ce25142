// What the manifest records about the machine besides the profilers (DESIGN.md §5): the GPUs
// and driver as nvidia-smi reports them, the CUDA version the driver supports, and, when the
// profiled command is a Python program, that Python's version and its PyTorch build. Parsers
// take the tools' text and are unit-tested on real output; EnvironmentProbe runs them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernlens/common/error.h"
#include "kernlens/profile/process.h"

namespace kernlens::profile {

struct GpuInfo {
  std::string name;            // "NVIDIA H100 80GB HBM3"
  std::string driver_version;  // "580.159.04"
  std::string memory_total;    // as printed: "81559 MiB"
  std::string uuid;
};

// The query nvidia-smi answers, one GPU per line: NAME, DRIVER, MEMORY, UUID.
inline constexpr std::string_view kNvidiaSmiQuery = "--query-gpu=name,driver_version,memory.total,uuid";
Result<std::vector<GpuInfo>> parse_nvidia_smi_query(std::string_view csv_noheader);

// "CUDA Version: 13.0" in nvidia-smi's banner: the newest CUDA the driver runs.
std::optional<std::string> parse_driver_cuda_version(std::string_view nvidia_smi_banner);

struct PythonInfo {
  std::string python_version;      // "3.12.3"
  std::optional<std::string> torch_version;  // "2.11.0+cu130"; absent when torch does not import
  std::optional<std::string> torch_cuda;     // the CUDA torch was built with, "13.0"
};

// The snippet kernlens runs with the program's own interpreter, and its "key value" lines.
// It reads torch/version.py as text instead of importing torch, which loads PyTorch's CUDA
// libraries and takes seconds of every `kernlens profile` run.
inline constexpr std::string_view kPythonProbe =
    "import importlib.util, os, platform, re\n"
    "print('python', platform.python_version())\n"
    "try:\n"
    "    spec = importlib.util.find_spec('torch')\n"
    "    text = open(os.path.join(os.path.dirname(spec.origin), 'version.py')).read()\n"
    "    for key, name in (('__version__', 'torch'), ('cuda', 'torch_cuda')):\n"
    "        m = re.search(r'^' + key + r'\\s*(?::[^=\\n]*)?=\\s*[\\x22\\x27]?([^\\x22\\x27\\n]*)', text, re.M)\n"
    "        if m:\n"
    "            print(name, m.group(1).strip() or 'None')\n"
    "except Exception:\n"
    "    pass\n";
Result<PythonInfo> parse_python_probe(std::string_view output);

// True for "python", "python3", "python3.12", "/usr/bin/python3" (not "pythonista").
bool is_python_interpreter(std::string_view program);

// Runs nvidia-smi (when found on PATH) and, for a Python command, its interpreter, all at once
// when constructed (`kernlens profile` probes while discovery runs); finish() returns what they
// said as the manifest's "environment" object. What cannot be probed is left out, with the
// reason under "notes".
class EnvironmentProbe {
 public:
  explicit EnvironmentProbe(const std::vector<std::string>& command);
  nlohmann::ordered_json finish();

 private:
  std::string python_;  // the command's interpreter, when it is Python
  std::optional<Result<PendingCapture>> smi_query_, smi_banner_, python_probe_;
};

}  // namespace kernlens::profile
