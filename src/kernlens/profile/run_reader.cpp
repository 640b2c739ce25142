#include "kernlens/profile/run_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernlens/analysis/analysis.h"
#include "kernlens/profile/deep_join.h"
#include "kernlens/profile/nvtx_path.h"
#include "kernlens/profile/tracer_command.h"

namespace kernlens::profile {
namespace fs = std::filesystem;
namespace {

// Launches outside the --nvtx-include paths leave the timeline.
void keep_included_stages(model::Profile& profile, const std::vector<std::string>& paths) {
  if (paths.empty()) return;
  std::vector<std::vector<std::string>> wanted;
  for (const auto& p : paths) {
    NvtxPath path = parse_nvtx_path(p, true);
    std::vector<std::string> labels;
    for (auto& name : path.ranges) {
      labels.push_back(model::range_label(model::NvtxRange{path.domain, name, model::RangeKind::kPushPop}));
    }
    wanted.push_back(std::move(labels));
  }
  auto inside = [&](const model::Launch& l) {
    const auto& stack = profile.stages[l.stage].push_pop;
    for (const auto& labels : wanted) {
      if (labels.size() > stack.size()) continue;
      bool match = true;
      for (std::size_t i = 0; i < labels.size() && match; ++i) match = model::range_label(stack[i]) == labels[i];
      if (match) return true;
    }
    return false;
  };
  std::erase_if(profile.launches, [&](const model::Launch& l) { return !inside(l); });
}

// The first of `names` (with or without ".gz") in `dir`; empty when none is there.
std::string first_existing(const fs::path& dir, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    for (const std::string suffix : {"", ".gz"}) {
      fs::path p = dir / (name + suffix);
      std::error_code ec;
      if (fs::is_regular_file(p, ec)) return p.string();
    }
  }
  return {};
}

// deep/<stem>_raw.csv and <stem>_details.csv (gzipped or not), in name order.
std::vector<std::string> deep_exports(const fs::path& deep) {
  std::vector<std::string> csvs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(deep, ec)) {
    const std::string name = entry.path().filename().string();
    for (const char* end : {"_raw.csv", "_raw.csv.gz", "_details.csv", "_details.csv.gz"}) {
      if (name.ends_with(end) && entry.is_regular_file()) csvs.push_back(entry.path().string());
    }
  }
  std::sort(csvs.begin(), csvs.end());
  return csvs;
}

}  // namespace

bool is_run_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / "manifest.json", ec);
}

Status read_discovery(const std::string& path, const std::vector<std::string>& nvtx_include,
                      bool filter_stages, model::Profile& timeline, const ingest::ReadOptions& options) {
  return read_discovery(std::vector<std::string>{path}, nvtx_include, filter_stages, timeline, options);
}

Status read_discovery(const std::vector<std::string>& paths, const std::vector<std::string>& nvtx_include,
                      bool filter_stages, model::Profile& timeline, const ingest::ReadOptions& options) {
  for (const auto& path : paths) {
    if (Status s = ingest::read_input(path, timeline, options); !s) return s;
  }
  if (filter_stages) keep_included_stages(timeline, nvtx_include);
  return ok_status();
}

std::vector<std::string> join_deep_exports(const std::vector<std::string>& csv_paths,
                                           model::Profile& timeline, const ingest::ReadOptions& options) {
  std::vector<std::string> warnings;
  model::Profile deep;
  for (const auto& csv : csv_paths) {
    if (Status s = ingest::read_input(csv, deep, options); !s) warnings.push_back(s.error().to_string());
  }
  ingest::reconcile_inputs(deep);
  DeepJoin join = join_deep_metrics(timeline, deep);
  for (const auto& name : join.unmatched) {
    warnings.push_back("the deep pass measured a kernel discovery did not see: " + name);
  }
  for (auto& in : deep.inputs) timeline.inputs.push_back(std::move(in));
  return warnings;
}

Status read_run_directory(const std::string& dir, model::Profile& profile,
                          const ingest::ReadOptions& options) {
  const fs::path root(dir);
  const std::string manifest_path = (root / "manifest.json").string();
  if (!profile.launches.empty() || !profile.inputs.empty()) {
    return make_error(dir, 0, "a run directory is a profile of its own: give it without other inputs");
  }
  nlohmann::json manifest;
  try {
    std::ifstream in(manifest_path);
    manifest = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return make_error(manifest_path, 0, fmt::format("not a kernlens manifest: {}", e.what()));
  }
  // `kernlens profile` under a launcher: one run directory per rank inside (rank_lockstep.h).
  if (manifest.is_object() && manifest.value("schema", "") == "kernlens.ranks/1") {
    return make_error(dir, 0, "a multi-rank run: give one rank's run directory (" + (root / "rank-0").string() +
                                  ", ...); manifest.json says which rank ran what");
  }
  if (!manifest.is_object() || manifest.value("schema", "") != "kernlens.manifest/1") {
    return make_error(manifest_path, 0, "not a kernlens manifest (schema kernlens.manifest/1 expected)");
  }
  const nlohmann::json options_json = manifest.value("options", nlohmann::json::object());
  // nsys and the tracer record every launch: the --nvtx-include filter is applied on reading.
  const std::string discovery = options_json.value("discovery", "");
  const bool filter_stages = discovery == "nsys" || discovery == "tracer";
  std::vector<std::string> nvtx_include;
  if (auto it = options_json.find("nvtx_include"); it != options_json.end() && it->is_array()) {
    for (const auto& p : *it) {
      if (p.is_string()) nvtx_include.push_back(p.get<std::string>());
    }
  }
  const std::vector<std::string> timeline = discovery_exports(dir, discovery);
  if (timeline.empty()) {
    return make_error(dir, 0, "a run directory without a discovery export (discovery/timeline.sqlite, "
                              "discovery/timing_raw.csv or discovery/kernlens-*.kltrace): the run failed before "
                              "discovery ended");
  }
  profile.inputs.push_back({dir, std::string(kRunDirectoryFormat), {}});
  if (Status s = read_discovery(timeline, nvtx_include, filter_stages, profile, options); !s) return s;
  for (const auto& warning : join_deep_exports(deep_exports(root / "deep"), profile, options)) {
    profile.inputs.front().warnings.push_back(make_error(dir, 0, warning));
  }
  return ok_status();
}

std::vector<std::string> discovery_exports(const std::string& dir, std::string_view method) {
  const fs::path discovery = fs::path(dir) / "discovery";
  // A fallback leaves the files of the methods that failed beside those of the one that ran.
  if (method == "nsys" || method == "ncu") {
    std::string file = first_existing(discovery, {method == "nsys" ? "timeline.sqlite" : "timing_raw.csv"});
    return file.empty() ? std::vector<std::string>{} : std::vector<std::string>{file};
  }
  if (method == "tracer") return tracer_outputs(discovery.string());
  if (auto file = first_existing(discovery, {"timeline.sqlite", "timing_raw.csv"}); !file.empty()) return {file};
  return tracer_outputs(discovery.string());
}

std::vector<std::string> read_run_command(const std::string& dir) {
  std::vector<std::string> argv;
  try {
    std::ifstream in(fs::path(dir) / "manifest.json");
    auto manifest = nlohmann::json::parse(in);
    if (auto it = manifest.find("command"); it != manifest.end() && it->is_array()) {
      for (const auto& arg : *it) {
        if (arg.is_string()) argv.push_back(arg.get<std::string>());
      }
    }
  } catch (const nlohmann::json::exception&) {
    return {};  // read_run_directory reports a bad manifest
  }
  return argv;
}

std::map<std::string, std::string> read_run_tags(const std::string& dir) {
  std::map<std::string, std::string> tags;
  try {
    std::ifstream in(fs::path(dir) / "manifest.json");
    auto manifest = nlohmann::json::parse(in);
    auto it = manifest.find("tags");
    if (it != manifest.end() && it->is_object()) {
      for (const auto& [key, value] : it->items()) {
        if (value.is_string()) {
          tags[key] = value.get<std::string>();
        } else if (value.is_number()) {
          tags[key] = value.dump();
        }
      }
    } else if (it != manifest.end() && it->is_array()) {  // ["KEY=VALUE", ...], as given
      for (const auto& tag : *it) {
        if (!tag.is_string()) continue;
        const std::string text = tag.get<std::string>();
        if (auto eq = text.find('='); eq != std::string::npos && eq > 0) tags[text.substr(0, eq)] = text.substr(eq + 1);
      }
    }
  } catch (const nlohmann::json::exception&) {
    return {};  // read_run_directory reports a bad manifest
  }
  return tags;
}

ingest::ReadOptions analysis_read_options() {
  ingest::ReadOptions options;
  options.all_metrics = false;
  options.metrics = analysis::analysis_metric_names();
  return options;
}

Status read_profile_input(const std::string& path, model::Profile& profile,
                          const ingest::ReadOptions& options) {
  if (is_run_directory(path)) return read_run_directory(path, profile, options);
  if (!profile.inputs.empty() && profile.inputs.front().format == kRunDirectoryFormat) {
    return make_error(path, 0, "a run directory is a profile of its own: give it without other inputs");
  }
  return ingest::read_input(path, profile, options);
}

}  // namespace kernlens::profile
