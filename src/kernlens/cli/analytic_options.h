// The options that give analytic FLOPs (analysis/model_flops.h): the model's config.json and
// what the program ran. Each may also come from a run directory's manifest tags (`kernlens
// profile --tag model_config=config.json --tag batch=4 ...`); an option given wins over a tag.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kernlens/analysis/mfu.h"
#include "kernlens/common/error.h"

namespace kernlens::cli {

struct AnalyticOptions {
  std::string model_config;
  std::optional<std::int64_t> batch, prompt_tokens, decode_steps, runs;
};

void add_analytic_options(CLI::App* cmd, AnalyticOptions& options);

// The analytic work of `options`, completed from the tags of the run directories among
// `inputs`; std::nullopt when neither names a model config. Errors (bad usage or input): a
// config that cannot be read or parsed (the key that is wrong), a size missing or not a
// positive integer.
Result<std::optional<analysis::AnalyticWork>> analytic_work(const AnalyticOptions& options,
                                                            const std::vector<std::string>& inputs);

}  // namespace kernlens::cli
