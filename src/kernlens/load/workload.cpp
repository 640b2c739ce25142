#include "kernlens/load/workload.h"

#include <charconv>
#include <filesystem>

#include <fmt/format.h>

#include "kernlens/common/file.h"

namespace kernlens::load {
namespace {

namespace fs = std::filesystem;

// What each size is called as an option and as a tag.
struct WorkloadSize {
  std::optional<std::int64_t> WorkloadOptions::*field;
  std::string_view flag, tag;
  bool required;  // with a model config
};
constexpr WorkloadSize kSizes[] = {
    {&WorkloadOptions::batch, "--batch", "batch", true},
    {&WorkloadOptions::prompt_tokens, "--prompt-tokens", "prompt_tokens", true},
    {&WorkloadOptions::decode_steps, "--decode-steps", "decode_steps", false},
    {&WorkloadOptions::runs, "--runs", "runs", false},
};

Result<std::int64_t> tag_number(const std::string& run_dir, std::string_view tag, const std::string& text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v <= 0) {
    return make_error(rundir::manifest_path(run_dir), 0,
                      fmt::format("tag '{}' must be a positive integer, not '{}'", tag, text));
  }
  return v;
}

// `options` with what it leaves out taken from the tags of `manifest` (of `run_dir`).
Result<WorkloadOptions> with_tags(WorkloadOptions options, const rundir::Manifest& manifest,
                                  const std::string& run_dir) {
  if (auto config = manifest.tag("model_config"); options.model_config.empty() && config) {
    // A path the profile was given: next to the run directory's manifest, else as written.
    fs::path path(*config);
    fs::path beside = fs::path(run_dir) / path.filename();
    options.model_config = path.is_relative() && fs::exists(beside) ? beside.string() : *config;
  }
  for (const auto& size : kSizes) {
    auto value = manifest.tag(size.tag);
    if (options.*size.field || !value) continue;
    auto v = tag_number(run_dir, size.tag, *value);
    if (!v) return v.error();
    options.*size.field = *v;
  }
  return options;
}

}  // namespace

Result<std::optional<analysis::AnalyticWork>> analytic_work(const WorkloadOptions& given,
                                                            const rundir::Manifest* manifest,
                                                            const std::string& run_dir) {
  WorkloadOptions options = given;
  if (manifest) {
    auto tagged = with_tags(options, *manifest, run_dir);
    if (!tagged) return tagged.error();
    options = std::move(tagged).value();
  }
  if (options.model_config.empty()) {
    for (const auto& size : kSizes) {
      if (given.*size.field) return make_error("", 0, fmt::format("{} needs --model-config", size.flag));
    }
    return std::optional<analysis::AnalyticWork>();
  }
  for (const auto& size : kSizes) {
    if (size.required && !(options.*size.field)) {
      return make_error("", 0, fmt::format("--model-config needs {} (or a run directory tagged {})", size.flag,
                                           size.tag));
    }
  }
  auto file = InputBuffer::open(options.model_config);
  if (!file) return file.error();
  auto config = analysis::parse_model_config(file->bytes(), options.model_config);
  if (!config) return config.error();
  analysis::AnalyticWork work{std::move(config).value(), options.model_config,
                              {*options.batch, *options.prompt_tokens, options.decode_steps.value_or(0)},
                              options.runs};
  return std::optional<analysis::AnalyticWork>(std::move(work));
}

}  // namespace kernlens::load
