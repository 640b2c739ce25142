// The options that give analytic FLOPs (analysis/model_flops.h): the model's config.json and
// what the program ran. A run directory's tags fill what is not given (load/workload.h).
#pragma once

#include <CLI/CLI.hpp>

#include "kernlens/load/workload.h"

namespace kernlens::cli {

void add_analytic_options(CLI::App* cmd, load::WorkloadOptions& options);

}  // namespace kernlens::cli
