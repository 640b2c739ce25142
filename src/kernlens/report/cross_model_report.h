// `kernlens report --db runs.db`: one self-contained HTML page on how the operation classes
// and kernel families fare across the database's models, batch sizes and sequence lengths:
// small multiples (one panel per op class: SOL and share of time against batch, or tokens
// when batch does not vary, one line per model) and the tables behind them.
#pragma once

#include <string>

#include "kernlens/model/scaling.h"

namespace kernlens::report {

// The small multiples of one figure for the op classes with the most time (`id`:
// "scaling-sol" or "scaling-share"); a note instead when there is nothing to draw.
enum class ScalingFigure { kSol, kShare };
std::string scaling_chart(const model::CrossModel& across, ScalingFigure figure);

// `db_name`: the database as the page names it (its file name).
std::string cross_model_html(const model::CrossModel& across, const std::string& db_name);
std::string cross_model_markdown(const model::CrossModel& across, const std::string& db_name);

}  // namespace kernlens::report
