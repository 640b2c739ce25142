// The environment probe's parsers on what nvidia-smi and Python printed on the H100
// (tests/fixtures/env_probe), and the probe itself on this machine's Python.
#include "kernlens/profile/env_probe.h"

#include <gtest/gtest.h>

#include "kernlens/profile/process.h"
#include "test_util.h"

namespace kernlens::profile {
namespace {

TEST(EnvProbe, NvidiaSmiQueryOnTheH100) {
  auto gpus = parse_nvidia_smi_query(test::fixture_bytes("env_probe/nvidia_smi_query.txt"));
  ASSERT_TRUE(gpus.ok()) << gpus.error().to_string();
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ((*gpus)[0].driver_version, "580.159.04");
  EXPECT_EQ((*gpus)[0].memory_total, "81559 MiB");
  EXPECT_TRUE((*gpus)[0].uuid.starts_with("GPU-"));
  EXPECT_FALSE(parse_nvidia_smi_query("").ok());
  auto wrong = parse_nvidia_smi_query("NVIDIA H100, 580.159.04\n");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().line, 1);
}

TEST(EnvProbe, DriverCudaVersionFromTheBanner) {
  EXPECT_EQ(parse_driver_cuda_version(test::fixture_bytes("env_probe/nvidia_smi.txt")), "13.0");
  EXPECT_EQ(parse_driver_cuda_version("no banner here"), std::nullopt);
  EXPECT_EQ(parse_driver_cuda_version("CUDA Version: N/A"), std::nullopt);
}

TEST(EnvProbe, PythonProbeLines) {
  // The values the H100's python3 reported (3.12.3, torch 2.11.0+cu130 built for CUDA 13.0).
  auto info = parse_python_probe("python 3.12.3\ntorch 2.11.0+cu130\ntorch_cuda 13.0\n");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->python_version, "3.12.3");
  EXPECT_EQ(info->torch_version, "2.11.0+cu130");
  EXPECT_EQ(info->torch_cuda, "13.0");
  auto cpu_torch = parse_python_probe("python 3.11.2\ntorch 2.5.1\ntorch_cuda None\n");
  ASSERT_TRUE(cpu_torch.ok());
  EXPECT_FALSE(cpu_torch->torch_cuda.has_value());
  EXPECT_FALSE(parse_python_probe("Traceback (most recent call last):\n").ok());
}

// The probe reads torch/version.py without importing torch (which loads PyTorch's CUDA
// libraries: seconds of every run). A torch package whose __init__ raises shows it: an import
// would print no torch line at all.
TEST(EnvProbe, PythonProbeReadsTorchVersionWithoutImportingTorch) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("torch"));
  dir.write("torch/__init__.py", "raise RuntimeError('the probe must not import torch')\n");
  // As tools/generate_torch_version.py writes it (PyTorch 2.x), and a CPU build's older form.
  dir.write("torch/version.py",
            "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
            "__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\n"
            "git_version = '0123abcd'\nhip: Optional[str] = None\n");
  ProcessOptions p;
  p.argv = {"python3", "-c", std::string(kPythonProbe)};
  p.env = {"PYTHONPATH=" + dir.path().string()};
  std::string printed;
  p.on_line = [&](OutputStream, std::string_view line) { printed += std::string(line) + "\n"; };
  auto result = run_process(p);
  ASSERT_TRUE(result.ok());
  auto info = parse_python_probe(printed);
  ASSERT_TRUE(info.ok()) << printed;
  EXPECT_EQ(info->torch_version, "2.11.0+cu130") << printed;
  EXPECT_EQ(info->torch_cuda, "13.0") << printed;
  dir.write("torch/version.py", "__version__ = '1.13.1'\ndebug = False\ncuda = None\n");
  printed.clear();
  ASSERT_TRUE(run_process(p).ok());
  info = parse_python_probe(printed);
  ASSERT_TRUE(info.ok()) << printed;
  EXPECT_EQ(info->torch_version, "1.13.1");
  EXPECT_FALSE(info->torch_cuda.has_value()) << printed;
}

TEST(EnvProbe, PythonInterpreterNames) {
  for (const char* yes : {"python", "python3", "python3.12", "/usr/bin/python3", "./venv/bin/python"}) {
    EXPECT_TRUE(is_python_interpreter(yes)) << yes;
  }
  for (const char* no : {"pythonista", "torchrun", "./app", "python3-config", ""}) {
    EXPECT_FALSE(is_python_interpreter(no)) << no;
  }
}

TEST(EnvProbe, ProbesThisMachinesPython) {
  auto env = EnvironmentProbe({"python3", "-c", "pass"}).finish();
  ASSERT_TRUE(env.contains("python_version")) << env.dump();
  EXPECT_FALSE(env["python_version"].get<std::string>().empty());
  // Not a Python command: no interpreter is run.
  EXPECT_FALSE(EnvironmentProbe({"true"}).finish().contains("python_version"));
}

}  // namespace
}  // namespace kernlens::profile
