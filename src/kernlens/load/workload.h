// What analytic FLOPs need (analysis/model_flops.h): the model's config.json and what the
// program ran. Each may be given (the command line's --model-config, --batch, ...) or come from
// the run directory's tags (`kernlens profile --tag model_config=config.json --tag batch=4
// ...`); a value given wins over a tag.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernlens/analysis/mfu.h"
#include "kernlens/common/error.h"
#include "kernlens/rundir/manifest.h"

namespace kernlens::load {

struct WorkloadOptions {
  std::string model_config;
  std::optional<std::int64_t> batch, prompt_tokens, decode_steps, runs;
};

// The analytic work of `given`, completed from the tags of the run directory `run_dir`
// (`manifest` its manifest; null for export files); std::nullopt when neither names a model
// config. Errors (bad usage or input): a config that cannot be read or parsed (the key that is
// wrong), a size missing or not a positive integer.
Result<std::optional<analysis::AnalyticWork>> analytic_work(const WorkloadOptions& given,
                                                            const rundir::Manifest* manifest,
                                                            const std::string& run_dir);

}  // namespace kernlens::load
