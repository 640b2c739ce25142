// kernlens analyze INPUT... [--top N] [--format text|json|md|csv] [--table T] [--rules FILE] [-o FILE]
//                  [work and threshold options]
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernlens/analysis/analysis.h"
#include "kernlens/cli/analytic_options.h"
#include "kernlens/cli/commands.h"
#include "kernlens/common/step_times.h"
#include "kernlens/ingest/registry.h"
#include "kernlens/model/profile.h"
#include "kernlens/report/csv_report.h"
#include "kernlens/report/json_report.h"
#include "kernlens/report/markdown_report.h"
#include "kernlens/report/text_report.h"

namespace kernlens::cli {
namespace {

struct AnalyzeOptions {
  std::vector<std::string> inputs;
  std::string format = "text";
  std::string table = "all";  // csv: kernels, families, stages or all
  std::string output = "-";
  std::size_t top = 0;  // 0: the format's default
  std::size_t name_width = 100;
  std::vector<std::string> rule_files;
  std::vector<std::string> model_flops, tokens;
  std::optional<double> params;
  std::string precision;
  double launch_bound_us = 5;
  bool verbose = false;
  load::LoadOptions load;  // the analysis and workload options
};

// The spellings --precision takes: the dtype a user thinks in (tensor-core math, as LLM GEMMs
// run; fp32 is the SIMT path, as PyTorch runs fp32 matmuls without TF32), or a path name.
const std::vector<std::pair<std::string, analysis::FlopPath>>& precision_names() {
  using analysis::FlopPath;
  static const std::vector<std::pair<std::string, FlopPath>> names = [] {
    std::vector<std::pair<std::string, FlopPath>> n = {
        {"bf16", FlopPath::kTensorBf16}, {"fp16", FlopPath::kTensorFp16}, {"fp8", FlopPath::kTensorFp8},
        {"tf32", FlopPath::kTensorTf32}, {"int8", FlopPath::kTensorInt8}, {"fp64", FlopPath::kTensorFp64},
        {"fp32", FlopPath::kSimtFp32}};
    for (auto path : {FlopPath::kTensorBf16, FlopPath::kTensorFp16, FlopPath::kTensorFp8, FlopPath::kTensorTf32,
                      FlopPath::kTensorInt8, FlopPath::kTensorFp64}) {
      n.emplace_back(std::string(analysis::path_name(path)), path);
    }
    return n;
  }();
  return names;
}

// Turns the work options into UserWork (analytic work is load()'s); errors are bad usage.
Result<analysis::UserWork> user_work(const AnalyzeOptions& opt) {
  analysis::UserWork work;
  work.params = opt.params;
  for (const auto& [list, out] : {std::pair{&opt.model_flops, &work.model_flops}, std::pair{&opt.tokens, &work.tokens}}) {
    for (const auto& text : *list) {
      auto v = analysis::parse_stage_value(text);
      if (!v) return v.error();
      out->push_back(*v);
    }
  }
  if (!work.tokens.empty() && !work.params) return make_error("", 0, "--tokens needs --params (the model's parameter count)");
  if (work.params && work.tokens.empty()) return make_error("", 0, "--params needs --tokens ([STAGE=]TOKENS)");
  if (!opt.precision.empty()) {
    for (const auto& [name, path] : precision_names()) {
      if (name == opt.precision) work.precision = path;
    }
  }
  return work;
}

std::string format_analysis(const AnalyzeOptions& opt, const load::Loaded& loaded) {
  const model::Profile& profile = loaded.profile;
  const analysis::Analysis& result = loaded.analysis;
  if (opt.format == "json") return report::analysis_json(profile, result, report::JsonOptions{opt.top});
  if (opt.format == "csv") return report::analysis_csv(profile, result, report::csv_table(opt.table), opt.top);
  if (opt.format == "md") {
    return report::analysis_markdown(profile, result, report::ReportContext{loaded.command(), opt.top ? opt.top : 20});
  }
  return report::analysis_text(profile, result, report::TextOptions{opt.top ? opt.top : 20, opt.name_width});
}

int run_analyze(AnalyzeOptions& opt) {
  if (int rc = check_output_is_no_input(opt.output, opt.inputs); rc != kExitOk) return rc;
  auto work = user_work(opt);
  if (!work) return bad_input(work.error());
  opt.load.analysis.work = std::move(work).value();
  opt.load.analysis.thresholds.launch_bound_ns = opt.launch_bound_us * 1e3;
  std::optional<names::KernelClassifier> classifier = load_classifier(opt.rule_files);
  if (!classifier) return kExitBadInput;
  StepTimes times;
  StepTimes* const steps = opt.verbose ? &times : nullptr;
  load::LoadOptions load = opt.load;
  load.analysis.step_times = steps;
  auto loaded = load_inputs(opt.inputs, *classifier, load);
  if (!loaded) return kExitBadInput;
  const std::string out = timed_step(steps, opt.format + " output", [&] { return format_analysis(opt, *loaded); });
  const int rc = timed_step(steps, "write", [&] { return write_output(opt.output, out); });
  if (opt.verbose) std::fprintf(stderr, "kernlens: where the time went (wall clock, the process's CPU time meanwhile):\n%s", times.text().c_str());
  return rc;
}

void add_work_options(CLI::App* cmd, AnalyzeOptions& opt) {
  const std::string group = "MFU (model FLOPs utilisation)";
  cmd->add_option("--model-flops", opt.model_flops,
                  "FLOPs of a stage, e.g. prefill=2.1e12; without STAGE= the whole profile. Replaces "
                  "the measured count")
      ->type_name("[STAGE=]FLOPS")
      ->group(group);
  cmd->add_option("--params", opt.params, "Model parameters, for 2 x params x tokens (with --tokens)")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->group(group);
  cmd->add_option("--tokens", opt.tokens, "Tokens a stage processed, e.g. decode=64 (with --params)")
      ->type_name("[STAGE=]N")
      ->group(group);
  std::vector<std::string> precisions;
  for (const auto& [name, path] : precision_names()) precisions.push_back(name);
  cmd->add_option("--precision", opt.precision,
                  "Precision whose peak MFU divides by when the FLOPs' own mix was not measured "
                  "(default: bf16)")
      ->check(CLI::IsMember(precisions))
      ->group(group);
}

void add_threshold_options(CLI::App* cmd, AnalyzeOptions& opt) {
  const std::string group = "Bottleneck thresholds";
  auto& t = opt.load.analysis.thresholds;
  cmd->add_option("--throughput-threshold", t.throughput_pct,
                  "SM or memory throughput (% of peak) at or above which it decides the bottleneck; "
                  "both below: latency")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--balance-margin", t.balance_pct,
                  "SM and memory throughput closer than this many points: mixed")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str()
      ->group(group);
  cmd->add_option("--launch-bound-us", opt.launch_bound_us,
                  "Kernels shorter than this on average are launch-bound")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group(group);
}

}  // namespace

Command add_analyze_command(CLI::App& app) {
  auto opt = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Where the GPU time goes, by kernel and stage, and why each hot kernel is slow.");
  cmd->footer(
      "INPUT is a run directory of `kernlens profile`, or any export kernlens reads, detected\n"
      "from its content (gzip is inflated):\n" +
      ingest::formats_help() +
      "Pages of the same ncu report are merged, not counted twice.\n"
      "Bottlenecks, roofs and FLOPs need Nsight Compute's sections: SpeedOfLight (verdicts),\n"
      "SpeedOfLight_RooflineChart and SpeedOfLight_HierarchicalTensorRooflineChart (FLOPs),\n"
      "MemoryWorkloadAnalysis, Occupancy, WarpStateStats; the details page adds ncu's advice.\n"
      "Examples:\n"
      "  kernlens analyze profile_raw.csv\n"
      "  kernlens analyze profile_raw.csv profile_details.csv --format json -o analysis.json\n"
      "  kernlens analyze run_raw.csv --params 1.1e9 --tokens prefill=1024 --tokens decode=64\n"
      "  kernlens analyze runs/llama --format csv --table kernels -o kernels.csv\n"
      "  kernlens analyze RUN_DIR --model-config config.json --batch 4 --prompt-tokens 256 --decode-steps 16");
  cmd->add_option("INPUT", opt->inputs, "Export files to read")->required()->type_name("FILE");
  cmd->add_option("--format", opt->format,
                  "Output format. csv: the kernel, family and stage tables (raw units, as in json) as "
                  "sections of one file, each after a line '# kernels', '# families', '# stages'; "
                  "--table gives one of them as a plain CSV file")
      ->check(CLI::IsMember({"text", "json", "md", "csv"}))
      ->capture_default_str();
  cmd->add_option("--table", opt->table, "With --format csv: the one table to write, or all as sections")
      ->check(CLI::IsMember({"kernels", "families", "stages", "all"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", opt->output, "Write to FILE instead of stdout ('-')")
      ->type_name("FILE")
      ->capture_default_str();
  cmd->add_option("--top", opt->top, "Kernels to list (default: 20 in text and md, all in json and csv)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--name-width", opt->name_width,
                  "Cut kernel names longer than this in text output (0: never)")
      ->capture_default_str();
  cmd->add_flag("--verbose", opt->verbose,
                "Print where the time went on stderr: reading each input, each part of the analysis, "
                "writing");
  add_rules_option(cmd, opt->rule_files);
  add_work_options(cmd, *opt);
  add_analytic_options(cmd, opt->load.workload);
  add_threshold_options(cmd, *opt);
  return {cmd, [opt] { return run_analyze(*opt); }};
}

}  // namespace kernlens::cli
