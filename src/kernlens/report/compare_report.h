// A comparison (analysis/compare.h) as text, JSON (schema kernlens.compare/1) or Markdown
// (for a pull request comment).
#pragma once

#include <cstddef>
#include <string>

#include "kernlens/analysis/compare.h"

namespace kernlens::report {

struct CompareReportOptions {
  std::size_t top = 15;          // kernels listed (text, md); 0 = all. JSON lists all
  std::size_t name_width = 80;   // kernel names cut to this in text and md (0: never)
};

// "run_key (model llama, batch 4, tokens 256, bf16, GPU)": a run as compare's outputs name it.
std::string run_label(const model::RunRecord& r);

std::string compare_text(const analysis::Comparison& c, const CompareReportOptions& options);
std::string compare_markdown(const analysis::Comparison& c, const CompareReportOptions& options);
std::string compare_json(const analysis::Comparison& c);

}  // namespace kernlens::report
