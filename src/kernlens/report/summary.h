// One-line summaries shared by the writers (text, Markdown, HTML): the inputs, the GPU, its
// peaks, how much of the time the deep metrics cover, and the profiled command.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"

namespace kernlens::report {

// What an input is, for people: its reader's description, else its format id.
std::string describe_input(const model::InputInfo& input);
// "989.4 TFLOP/s tensor_bf16, 3.350 TB/s DRAM (source)" for the paths LLMs run on.
std::string peaks_line(const analysis::PeakRates& peaks);
// Which share of the kernel time the ncu throughput metrics cover, or that none do.
std::string coverage_line(const analysis::MetricCoverage& coverage);
// "NVIDIA H100 80GB HBM3, cc 9.0, 132 SMs" for the GPU most launches ran on; "" when unknown.
std::string device_line(const model::Profile& profile, const analysis::Analysis& analysis);
// How a stage's MFU was found ("137.4 GFLOP measured / (176.4 us kernel time x 989.4 TFLOP/s
// tensor_bf16)"), or why it is missing.
std::string mfu_note(const analysis::StageWork& work);
// A stage's MFU with its interval: "41.3%" when exact, "41.3% (41.3–44.0%)" when kernels never
// measured may add up to 44.0%, "≥ 41.3%" when they have no upper bound; "-" when missing.
std::string mfu_text(const analysis::StageWork& work);
// Measured / analytic FLOPs: "0.98", "0.98–1.10" with kernels never measured, "≥ 0.98"
// without an upper bound; "-" when either is missing.
std::string flops_ratio_text(const analysis::StageWork& work);
// "282.1 GFLOP analytic (...): MFU 6.7%; measured / analytic 0.98", or why there is none.
std::string analytic_note(const analysis::StageWork& work);
// ncu's rule texts run to a paragraph; the first sentence says what it found.
std::string first_sentence(std::string_view text);

}  // namespace kernlens::report
