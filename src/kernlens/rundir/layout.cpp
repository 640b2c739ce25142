#include "kernlens/rundir/layout.h"

#include <algorithm>
#include <ctime>
#include <system_error>

#include <fmt/format.h>

#include "kernlens/common/file.h"
#include "kernlens/common/text.h"
namespace kernlens::rundir {
namespace fs = std::filesystem;
namespace {

// In the order `auto` tries them.
constexpr std::array kDiscoveryLayouts = {
    DiscoveryLayout{DiscoveryMethod::kTracer, "tracer", "", "kernlens-", ".kltrace", true, true},
    DiscoveryLayout{DiscoveryMethod::kNsys, "nsys", "timeline", "timeline", ".sqlite", false, true},
    DiscoveryLayout{DiscoveryMethod::kNcu, "ncu", "timing", "timing_raw", ".csv", false, false},
};

// The methods in the order a manifest that names none is read: a single export file before
// one per process.
std::vector<const DiscoveryLayout*> fallback_order() {
  std::vector<const DiscoveryLayout*> order;
  for (const auto& l : kDiscoveryLayouts) order.push_back(&l);
  std::stable_partition(order.begin(), order.end(), [](const DiscoveryLayout* l) { return !l->one_per_process; });
  return order;
}

// A directory `create_run_dir` may replace: a kernlens run directory, or nothing at all.
bool replaceable(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kManifestFile, ec) || fs::is_empty(dir, ec);
}

// The regular files of `dir` whose names `keep` accepts, in name order.
template <class Keep>
std::vector<std::string> files_in(const fs::path& dir, Keep keep) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (keep(entry.path().filename().string()) && entry.is_regular_file()) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

bool is_run_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / kManifestFile, ec);
}

std::string manifest_path(const std::string& dir) { return (fs::path(dir) / kManifestFile).string(); }

std::string make_run_id(std::chrono::system_clock::time_point now, std::string_view program) {
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&t, &utc);
  std::string name = file_name_safe(
      std::string(program.substr(program.rfind('/') == std::string_view::npos ? 0 : program.rfind('/') + 1)));
  if (name.empty() || name == "." || name == "..") name = "run";
  return fmt::format("{:04}{:02}{:02}-{:02}{:02}{:02}-{}", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                     utc.tm_hour, utc.tm_min, utc.tm_sec, name);
}

Result<RunDir> create_run_dir(const fs::path& out, const std::string& run_id, bool force_overwrite) {
  RunDir dir{run_id, out / run_id, out / run_id / "discovery", out / run_id / "deep"};
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return make_error(out.string(), 0, "cannot create the output directory: " + ec.message());
  if (force_overwrite && fs::is_directory(dir.root, ec)) {
    if (!replaceable(dir.root)) {
      return make_error(dir.root.string(), 0,
                        "exists and is not a kernlens run directory (no manifest.json): -f replaces only a run "
                        "directory");
    }
    fs::remove_all(dir.root, ec);
    if (ec) return make_error(dir.root.string(), 0, "cannot replace the run directory: " + ec.message());
  }
  if (!fs::create_directory(dir.root, ec)) {
    if (ec) return make_error(dir.root.string(), 0, "cannot create the run directory: " + ec.message());
    return make_error(dir.root.string(), 0,
                      "the run directory exists already: a run never overwrites another (-f replaces it, "
                      "--run-id names another)");
  }
  for (const auto& sub : {dir.discovery, dir.deep}) {
    if (!fs::create_directory(sub, ec) && ec) return make_error(sub.string(), 0, "cannot create: " + ec.message());
  }
  return dir;
}

std::vector<std::string> run_dir_files(const RunDir& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir.root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string relative = fs::relative(it->path(), dir.root, ec).string();
    if (relative != kManifestFile) files.push_back(std::move(relative));
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::span<const DiscoveryLayout> discovery_layouts() { return kDiscoveryLayouts; }

const DiscoveryLayout& discovery_layout(DiscoveryMethod method) {
  for (const auto& l : kDiscoveryLayouts) {
    if (l.method == method) return l;
  }
  return kDiscoveryLayouts.back();
}

const DiscoveryLayout* find_discovery_layout(std::string_view name) {
  for (const auto& l : kDiscoveryLayouts) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

std::vector<std::string> discovery_exports_in(const fs::path& discovery, const DiscoveryLayout& layout) {
  if (layout.one_per_process) {
    return files_in(discovery, [&](const std::string& name) {
      return name.starts_with(layout.export_prefix) && name.ends_with(layout.export_suffix);
    });
  }
  for (const std::string suffix : {"", ".gz"}) {
    fs::path p = discovery / (layout.export_file() + suffix);
    if (is_regular_file_at(p)) return {p.string()};
  }
  return {};
}

std::vector<std::string> discovery_exports(const std::string& dir, std::string_view method) {
  const fs::path discovery = fs::path(dir) / "discovery";
  if (const DiscoveryLayout* layout = find_discovery_layout(method)) return discovery_exports_in(discovery, *layout);
  for (const DiscoveryLayout* layout : fallback_order()) {
    if (auto files = discovery_exports_in(discovery, *layout); !files.empty()) return files;
  }
  return {};
}

std::string discovery_export_names() {
  const auto order = fallback_order();
  std::string names;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i > 0) names += i + 1 == order.size() ? " or " : ", ";
    names += fmt::format("discovery/{}{}{}", order[i]->export_prefix, order[i]->one_per_process ? "*" : "",
                         order[i]->export_suffix);
  }
  return names;
}

fs::path deep_export(const RunDir& dir, std::string_view stem, std::string_view page) {
  return dir.deep / fmt::format("{}_{}.csv", stem, page);
}

std::vector<std::string> deep_exports(const std::string& dir) {
  return files_in(fs::path(dir) / "deep", [](const std::string& name) {
    for (std::string_view page : kDeepPages) {
      const std::string end = fmt::format("_{}.csv", page);
      if (name.ends_with(end) || name.ends_with(end + ".gz")) return true;
    }
    return false;
  });
}

}  // namespace kernlens::rundir
