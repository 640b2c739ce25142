// kernlens analyze INPUT... [--top N] [--format text|json] [-o FILE]
#include <memory>
#include <string>
#include <vector>

#include "kernlens/analysis/aggregate.h"
#include "kernlens/cli/commands.h"
#include "kernlens/common/file.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/model/profile.h"
#include "kernlens/report/json_report.h"
#include "kernlens/report/text_report.h"

namespace kernlens::cli {
namespace {

struct AnalyzeOptions {
  std::vector<std::string> inputs;
  std::string format = "text";
  std::string output = "-";
  std::size_t top = 0;  // 0: the format's default
  std::size_t name_width = 100;
};

int run_analyze(const AnalyzeOptions& opt) {
  model::Profile profile;
  // The analysis so far uses each launch's own fields only: no metric column is decoded.
  ingest::ReadOptions read_options;
  read_options.all_metrics = false;
  for (const auto& path : opt.inputs) {
    if (Status s = ingest::read_input(path, profile, read_options); !s) {
      print_error(s.error().to_string());
      return kExitBadInput;
    }
  }
  ingest::reconcile_inputs(profile);
  for (const auto& in : profile.inputs) {
    for (const auto& w : in.warnings) print_warning(w.to_string());
  }
  analysis::Aggregate agg = analysis::aggregate(profile);
  std::string out;
  if (opt.format == "json") {
    out = report::analysis_json(profile, agg, report::JsonOptions{opt.top});
  } else {
    out = report::analysis_text(profile, agg, report::TextOptions{opt.top ? opt.top : 20, opt.name_width});
  }
  if (Status s = write_file_atomically(opt.output, out); !s) {
    print_error(s.error().to_string());
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace

Command add_analyze_command(CLI::App& app) {
  auto opt = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Read profiler exports into one kernel table: where the GPU time goes, by kernel and stage.");
  cmd->footer(
      "INPUT is any export kernlens reads, detected from its content (gzip is inflated):\n"
      "  Nsight Compute CSV: ncu --import R.ncu-rep --page raw --csv  (or --page details,\n"
      "  or --csv --print-summary per-kernel). Pages of the same report are merged, not\n"
      "  counted twice.\n"
      "  Nsight Systems: nsys export --type sqlite R.nsys-rep, or nsys stats --report\n"
      "  cuda_gpu_kern_sum --format csv --output - R.nsys-rep.\n"
      "Examples:\n"
      "  kernlens analyze profile_raw.csv\n"
      "  kernlens analyze profile_raw.csv profile_details.csv --format json -o analysis.json");
  cmd->add_option("INPUT", opt->inputs, "Export files to read")->required()->type_name("FILE");
  cmd->add_option("--format", opt->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", opt->output, "Write to FILE instead of stdout ('-')")
      ->type_name("FILE")
      ->capture_default_str();
  cmd->add_option("--top", opt->top, "Kernels to list (default: 20 in text, all in json)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--name-width", opt->name_width,
                  "Cut kernel names longer than this in text output (0: never)")
      ->capture_default_str();
  return {cmd, [opt] { return run_analyze(*opt); }};
}

}  // namespace kernlens::cli
