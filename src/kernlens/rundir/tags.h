// A run's tags: what the workload or the user says it ran (model, batch, prompt_tokens, ...),
// given as `--tag KEY=VALUE` to `kernlens profile` (kept in the manifest), `db ingest` and
// `sweep`. Readers take the workload's sizes from them (load/workload.h, load/run_record.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernlens/common/error.h"

namespace kernlens::rundir {

// KEY=VALUE pairs in the order given, keys unique.
using Tags = std::vector<std::pair<std::string, std::string>>;

// "KEY=VALUE" strings into tags; values become valid UTF-8. Errors: no '=', an empty key, a key
// given twice, a key of characters other than letters, digits, '_', '-', '.'.
Result<Tags> parse_tags(const std::vector<std::string>& texts);

}  // namespace kernlens::rundir
