// Figures that stay comparable when the work changes: kernel and stage time per token, per
// launch or per FLOP, for compare across batch sizes and sequence lengths.
//
// Tokens are counted per sample: per repetition for a run with repetitions, else for the
// whole run. They come, each later source winning, from the run's LLM tags (prefill: batch x
// prompt_tokens or tokens, decode: batch x decode_steps, warmup: both times the `warmup` tag; a
// whole run counts its --repeat measured runs), from the run's tags `tokens.<stage>=N` (a top-level
// stage; `kernlens profile --tag`), and from compare's --tokens. A stage's figure is divided
// by the tokens of its top-level stage; a kernel's and the total by the tokens of every
// top-level stage the sample has.
//
// Per FLOP is time per GFLOP of the kernel's or stage's measured FLOPs (the deep pass's
// counters): absent where they were not measured. Per launch is the mean time of a launch.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "kernlens/common/error.h"
#include "kernlens/model/run_record.h"

namespace kernlens::analysis {

enum class Normalization { kNone, kToken, kLaunch, kFlop };
std::string_view normalization_name(Normalization n);        // "none", "token", "launch", "flop"
std::string_view normalization_unit(Normalization n);        // "", "per token", "per launch", "per GFLOP"
Result<Normalization> parse_normalization(std::string_view name);

// Tokens per sample by top-level stage name.
using TokenCounts = std::map<std::string, double>;

// The top-level stage of a stage path ("decode/layer0" -> "decode").
std::string top_level_stage(std::string_view stage);

// The tokens of one sample of `run` (a repetition when `per_repetition`, else the whole run),
// then `overrides` (--tokens) on top.
TokenCounts token_counts(const model::RunRecord& run, bool per_repetition, const TokenCounts& overrides);

// What differs between two runs' shapes of work ("batch 4 -> 8", "prompt 128 -> 256",
// "tokens.prefill 1024 -> 2048"); empty when nothing that changes the work per run differs.
std::string work_difference(const model::RunRecord& a, const model::RunRecord& b);

// `sample` (a whole run, or a repetition made a record by repetition_record) with its
// kernel, stage and total figures divided as `n` says. Errors: per token without a token count.
Result<model::RunRecord> normalize_run(model::RunRecord sample, Normalization n, const TokenCounts& tokens);

// Repetition `index` of `run` as a record of its own: its kernels take their names, classes,
// shapes and bottlenecks from the run's table, and FLOPs in proportion to their launches.
model::RunRecord repetition_record(const model::RunRecord& run, std::size_t index);

}  // namespace kernlens::analysis
