#include "kernlens/load/run_record.h"

#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "kernlens/analysis/repetitions.h"
#include "kernlens/analysis/run_summary.h"
#include "kernlens/load/load.h"
#include "kernlens/rundir/run_key.h"

namespace kernlens::load {
namespace {

std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
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

// The tags with a column of their own in the runs table: text, or an integer.
struct ColumnTag {
  std::string_view key;
  std::string model::RunMeta::*text = nullptr;
  std::optional<std::int64_t> model::RunMeta::*integer = nullptr;
};
constexpr ColumnTag kColumnTags[] = {
    {"model", &model::RunMeta::model, nullptr},
    {"dtype", &model::RunMeta::dtype, nullptr},
    {"batch", nullptr, &model::RunMeta::batch},
    {"tokens", nullptr, &model::RunMeta::tokens},
};

const ColumnTag* column_tag(std::string_view key) {
  for (const auto& c : kColumnTags) {
    if (c.key == key) return &c;
  }
  return nullptr;
}

// The tags with a column of their own fill it. Errors: batch or tokens not an integer.
Status apply_tags(model::RunMeta& meta, const rundir::Tags& tags) {
  for (const auto& [key, value] : tags) {
    set_tag(meta, key, value);
    const ColumnTag* column = column_tag(key);
    if (!column) continue;
    if (column->text) {
      meta.*(column->text) = value;
      continue;
    }
    auto n = parse_int(value);
    if (!n) return make_error("", 0, fmt::format("--tag {}={}: {} must be an integer", key, value, key));
    meta.*(column->integer) = *n;
  }
  return ok_status();
}

// What the manifest of `dir` says of the run.
Result<model::RunMeta> manifest_meta(const std::string& dir, const rundir::Manifest& m) {
  model::RunMeta meta;
  meta.command = fmt::format("{}", fmt::join(m.command, " "));
  if (Status s = apply_tags(meta, m.tags); !s) return make_error(rundir::manifest_path(dir), 0, s.error().message);
  meta.gpu = m.tool("/gpu");
  meta.driver = m.tool("/driver");
  meta.ncu_version = m.tool("/ncu/version");
  meta.nsys_version = m.tool("/nsys/version");
  meta.torch_version = m.tool("/torch");
  auto env = [&](const char* name) {
    auto it = m.env.find(name);
    return it == m.env.end() ? std::string() : it->second;
  };
  meta.cuda_version = env("CUDA_VERSION");
  if (meta.driver.empty()) meta.driver = env("NVIDIA_DRIVER_VERSION");
  return meta;
}

}  // namespace

bool tag_fits_column(std::string_view key, std::string_view value) {
  const ColumnTag* column = column_tag(key);
  return !column || !column->integer || parse_int(value);
}

Result<model::RunRecord> load_run_record(const std::string& path, const rundir::Tags& tags,
                                         const names::KernelClassifier& classifier, std::string key) {
  const std::vector<std::string> inputs = rundir::run_inputs(path);
  auto loaded = load(inputs, classifier);
  if (!loaded) return loaded.error();
  model::RunMeta meta;
  if (loaded->manifest) {
    auto m = manifest_meta(path, *loaded->manifest);
    if (!m) return m.error();
    meta = std::move(m).value();
  }
  if (key.empty()) {
    auto computed = rundir::run_key(inputs);
    if (!computed) return computed.error();
    key = std::move(computed).value();
  }
  meta.run_key = std::move(key);
  meta.source_path = path;
  if (Status s = apply_tags(meta, tags); !s) return s.error();
  model::RunRecord run = analysis::summarize_run(loaded->profile, loaded->analysis);
  if (loaded->manifest) run.repeat = loaded->manifest->repeat();
  // Repetitions not found leave the run one sample; compare says so (repeat > 1, none split).
  if (auto repetitions = analysis::split_repetitions(loaded->profile, loaded->analysis.agg, run.repeat)) {
    run.repetitions = std::move(repetitions).value();
  }
  meta.source_format = loaded->profile.inputs.empty() ? "" : std::string(model::format_id(loaded->profile.inputs.front().format));
  if (meta.gpu.empty() && run.device) meta.gpu = run.device->name;
  run.meta = std::move(meta);
  return run;
}

}  // namespace kernlens::load
