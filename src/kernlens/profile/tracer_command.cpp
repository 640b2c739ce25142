#include "kernlens/profile/tracer_command.h"

#include <algorithm>
#include <filesystem>

namespace kernlens::profile {
namespace fs = std::filesystem;
namespace {

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// libcupti.so, else its versioned names (a copy of the build keeps only libcupti.so.13).
std::string cupti_in(const fs::path& dir) {
  if (is_file(dir / "libcupti.so")) return (dir / "libcupti.so").string();
  std::error_code ec;
  std::vector<std::string> versioned;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("libcupti.so.") && is_file(entry.path())) versioned.push_back(entry.path().string());
  }
  std::sort(versioned.begin(), versioned.end());
  return versioned.empty() ? std::string() : versioned.front();
}

std::string locate_cupti(const std::string& explicit_cupti, const fs::path& tracer_dir) {
  if (!explicit_cupti.empty()) return explicit_cupti;
  std::vector<fs::path> dirs = {tracer_dir};
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) dirs.push_back(fs::path(home) / "lib64");
  dirs.push_back("/usr/local/cuda/lib64");
  dirs.push_back("/usr/local/cuda/targets/x86_64-linux/lib");
  dirs.push_back("/usr/local/cuda/extras/CUPTI/lib64");
  for (const auto& dir : dirs) {
    if (auto found = cupti_in(dir); !found.empty()) return found;
  }
  return {};
}

}  // namespace

Result<TracerPaths> locate_tracer(const std::string& explicit_path, const std::string& explicit_cupti,
                                  const std::string& exe_dir) {
  std::vector<fs::path> candidates;
  if (!explicit_path.empty()) {
    candidates.push_back(explicit_path);
  } else if (!exe_dir.empty()) {
    for (const char* sub : {".", "../lib", "../lib/kernlens"}) candidates.push_back(fs::path(exe_dir) / sub / kTracerLibraryName);
  }
  std::string tried;
  for (const auto& c : candidates) {
    if (is_file(c)) {
      fs::path library = fs::absolute(c).lexically_normal();
      return TracerPaths{library.string(), locate_cupti(explicit_cupti, library.parent_path())};
    }
    tried += (tried.empty() ? "" : ", ") + c.lexically_normal().string();
  }
  return make_error("", 0, std::string("the kernlens tracer (") + kTracerLibraryName + ") was not found (looked at " +
                               (tried.empty() ? std::string("nothing") : tried) +
                               "); it is built where CUPTI is found; give its path with --tracer");
}

std::vector<std::string> tracer_environment(const TracerPaths& paths, const std::string& trace_dir) {
  std::vector<std::string> env = {"CUDA_INJECTION64_PATH=" + paths.library};
  if (!paths.cupti.empty()) env.push_back("NVTX_INJECTION64_PATH=" + paths.cupti);
  env.push_back("KERNLENS_TRACE_DIR=" + trace_dir);
  return env;
}

std::vector<std::string> tracer_outputs(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("kernlens-") && name.ends_with(".kltrace") && entry.is_regular_file()) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace kernlens::profile
