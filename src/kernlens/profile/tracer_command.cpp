#include "kernlens/profile/tracer_command.h"

#include <filesystem>

#include <fmt/format.h>

#include "kernlens/common/file.h"

namespace kernlens::profile {
namespace fs = std::filesystem;

Result<TracerPaths> locate_tracer(const std::string& explicit_path, const std::string& exe_dir) {
  std::vector<fs::path> candidates;
  if (!explicit_path.empty()) {
    candidates.push_back(explicit_path);
  } else if (!exe_dir.empty()) {
    for (const char* sub : {".", "../lib", "../lib/kernlens"}) candidates.push_back(fs::path(exe_dir) / sub / kTracerLibraryName);
  }
  std::string tried;
  for (const auto& c : candidates) {
    if (is_regular_file_at(c)) {
      return TracerPaths{fs::absolute(c).lexically_normal().string()};
    }
    tried += (tried.empty() ? "" : ", ") + c.lexically_normal().string();
  }
  return make_error("", 0,
                    fmt::format("the kernlens tracer ({}) was not found (looked at {}); it is built where CUPTI is "
                                "found; give its path with --tracer",
                                kTracerLibraryName, tried.empty() ? "nothing" : tried));
}

std::vector<std::string> tracer_environment(const TracerPaths& paths, const std::string& trace_dir) {
  return {"CUDA_INJECTION64_PATH=" + paths.library, "NVTX_INJECTION64_PATH=" + paths.library,
          "KERNLENS_TRACE_DIR=" + trace_dir};
}

std::string executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace kernlens::profile
