#include "kernlens/cli/analytic_options.h"

#include <charconv>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "kernlens/common/file.h"
#include "kernlens/profile/run_reader.h"

namespace kernlens::cli {
namespace {

namespace fs = std::filesystem;

// What each option is called on the command line and among the manifest's tags.
struct SizeOption {
  std::optional<std::int64_t> AnalyticOptions::*field;
  std::string_view flag, tag;
  bool required;
};
constexpr SizeOption kSizes[] = {
    {&AnalyticOptions::batch, "--batch", "batch", true},
    {&AnalyticOptions::prompt_tokens, "--prompt-tokens", "prompt_tokens", true},
    {&AnalyticOptions::decode_steps, "--decode-steps", "decode_steps", false},
    {&AnalyticOptions::runs, "--runs", "runs", false},
};

Result<std::int64_t> tag_number(const std::string& dir, std::string_view tag, const std::string& text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v <= 0) {
    return make_error(dir + "/manifest.json", 0,
                      fmt::format("tag '{}' must be a positive integer, not '{}'", tag, text));
  }
  return v;
}

// `options` with what it leaves out taken from the tags of run directory `dir`.
Result<AnalyticOptions> with_tags(AnalyticOptions options, const std::string& dir) {
  const std::map<std::string, std::string> tags = profile::read_run_tags(dir);
  if (auto it = tags.find("model_config"); options.model_config.empty() && it != tags.end()) {
    // A path the profile was given: next to the run directory's manifest, else as written.
    fs::path path(it->second);
    fs::path beside = fs::path(dir) / path.filename();
    options.model_config = path.is_relative() && fs::exists(beside) ? beside.string() : it->second;
  }
  for (const auto& size : kSizes) {
    auto it = tags.find(std::string(size.tag));
    if (options.*size.field || it == tags.end()) continue;
    auto v = tag_number(dir, size.tag, it->second);
    if (!v) return v.error();
    options.*size.field = *v;
  }
  return options;
}

}  // namespace

void add_analytic_options(CLI::App* cmd, AnalyticOptions& o) {
  const std::string group = "Analytic FLOPs (from the model's config)";
  cmd->add_option("--model-config", o.model_config,
                  "The model's Hugging Face config.json: analytic FLOPs of the prefill and decode stages, "
                  "MFU on them and measured / analytic (llama, mistral, qwen2, qwen3, mixtral, gpt2)")
      ->type_name("FILE")
      ->group(group);
  cmd->add_option("--batch", o.batch, "Sequences per forward pass (with --model-config)")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->group(group);
  cmd->add_option("--prompt-tokens", o.prompt_tokens, "Tokens of each prompt (with --model-config)")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->group(group);
  cmd->add_option("--decode-steps", o.decode_steps, "Decode steps of one generation (with --model-config)")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->group(group);
  cmd->add_option("--runs", o.runs,
                  "Times the program ran each stage, warm-up runs included (default: the range's "
                  "instances on a timeline, else 1)")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->group(group);
}

Result<std::optional<analysis::AnalyticWork>> analytic_work(const AnalyticOptions& given,
                                                            const std::vector<std::string>& inputs) {
  AnalyticOptions options = given;
  for (const auto& input : inputs) {
    if (!profile::is_run_directory(input)) continue;
    auto tagged = with_tags(options, input);
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

}  // namespace kernlens::cli
