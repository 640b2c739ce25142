#include "kernlens/profile/deep_pass.h"

#include <filesystem>
#include <ostream>

#include <fmt/format.h>

#include "kernlens/rundir/layout.h"

namespace kernlens::profile {
namespace {

constexpr std::string_view kDeepPlaceholder = "regex:<THE KERNELS DISCOVERY SELECTS>";
constexpr std::string_view kDeepIdPlaceholder = "::regex:<THE KERNELS DISCOVERY SELECTS>:<LAUNCH NUMBER>";

// What usually makes a deep-pass run profile nothing.
const std::vector<std::string>& deep_causes() {
  static const std::vector<std::string> causes = {
      "the launch numbers chosen from discovery are past the end of this run: the program launched fewer "
      "or other kernels than in discovery (another input, a cache that was warm, nondeterminism)",
      "the --nvtx-include/--nvtx-range filter matches no range in this run"};
  return causes;
}

// Exports one report's raw and details pages; the CSVs written, or why not.
std::string export_report(RunContext& run, const std::string& step, const std::string& stem,
                          const DeepInvocation& d, std::vector<std::string>& csvs) {
  auto exports = export_argvs(run.ncu.ncu, d.report_base + ".ncu-rep");  // one per page of rundir::kDeepPages
  for (std::size_t i = 0; i < exports.size() && i < rundir::kDeepPages.size(); ++i) {
    const std::string_view page = rundir::kDeepPages[i];
    auto csv = rundir::deep_export(run.dir, stem, page);
    StepSpec spec(fmt::format("{} export {}", step, page), exports[i], run.dir.deep,
                  fmt::format("{}_export_{}", stem, page));
    spec.stdout_file = csv;
    auto exp = run_step(run, spec);
    if (!exp) return exp.error().to_string();
    if (auto why = failure(step + " export", *exp); !why.empty()) return why;
    csvs.push_back(csv.string());
  }
  return {};
}

}  // namespace

DeepPassResult deep_pass(RunContext& run, const Selection& selection) {
  std::uint64_t planned = 0;
  for (const auto& inv : selection.invocations) planned += inv.launch_count;
  DeepProgress progress(planned, run.opt.progress_tty);
  DeepPassResult r;
  std::string nothing;  // why the last run that profiled nothing did
  for (std::size_t i = 0; i < selection.invocations.size() && r.why.empty(); ++i) {
    if (run.stop_requested()) break;
    const NcuInvocation& inv = selection.invocations[i];
    const std::string stem = fmt::format("deep_{}", i + 1);
    DeepInvocation d{std::string(to_string(selection.name_base)), inv.kernel_name, inv.kernel_id, inv.launch_skip,
                     inv.launch_count, (run.dir.deep / stem).string()};
    auto on_event = [&](const NcuEvent& e) { run.err << progress.on_event(e, run.elapsed_s()) << std::flush; };
    const std::string step = fmt::format("deep {}/{}", i + 1, selection.invocations.size());
    StepSpec spec(step, deep_argv(run.ncu, run.opt.tier, run.opt.replay, d, run.opt.command), run.dir.deep, stem);
    spec.on_event = on_event;
    auto result = run_step(run, spec);
    if (!result) {
      r.why = result.error().to_string();
      break;
    }
    if (r.why = failure(step, *result); !r.why.empty()) break;
    std::error_code ec;
    if (result->no_kernels_profiled || !std::filesystem::is_regular_file(d.report_base + ".ncu-rep", ec)) {
      nothing = ncu_profiled_nothing(step, *result, deep_causes());
      run.note("warning: " + nothing);
      continue;
    }
    r.why = export_report(run, step, stem, d, r.csvs);
  }
  const bool ended_early = !r.why.empty() || run.stop_requested();
  run.err << progress.finish(run.elapsed_s(), ended_early) << std::flush;
  if (r.why.empty() && r.csvs.empty() && !run.stop_requested()) {
    r.why = nothing.empty() ? "the deep pass measured no kernel" : "the deep pass measured no kernel: " + nothing;
  }
  return r;
}

std::vector<std::vector<std::string>> deep_pass_plan(const RunContext& run) {
  DeepInvocation d{"mangled", std::string(kDeepPlaceholder), std::string(kDeepIdPlaceholder), 0, 1,
                   (run.dir.deep / "deep_1").string()};
  std::vector<std::vector<std::string>> argvs = {deep_argv(run.ncu, run.opt.tier, run.opt.replay, d, run.opt.command)};
  for (auto& argv : export_argvs(run.ncu.ncu, d.report_base + ".ncu-rep")) argvs.push_back(std::move(argv));
  return argvs;
}

}  // namespace kernlens::profile
