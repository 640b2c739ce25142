// kernlens report INPUT... -o report.html [--format html|md] [--top N] [--rules FILE]
//                 [--model-config config.json --batch B --prompt-tokens P --decode-steps N --runs R]
#include <memory>
#include <string>
#include <vector>

#include "kernlens/cli/analytic_options.h"
#include "kernlens/cli/commands.h"
#include "kernlens/cli/load_analysis.h"
#include "kernlens/report/html_report.h"
#include "kernlens/report/markdown_report.h"

namespace kernlens::cli {
namespace {

struct ReportOptions {
  std::vector<std::string> inputs;
  std::string format = "html";
  std::string output = "-";
  std::size_t top = 25;
  std::vector<std::string> rule_files;
  AnalyticOptions analytic;
};

int run_report(const ReportOptions& opt) {
  analysis::AnalysisOptions options;
  auto analytic = analytic_work(opt.analytic, opt.inputs);
  if (!analytic) return bad_input(analytic.error());
  options.work.analytic = std::move(analytic).value();
  auto loaded = load_analysis(opt.inputs, opt.rule_files, options);
  if (!loaded) return kExitBadInput;
  return write_report(*loaded, opt.format, opt.top, opt.output);
}

}  // namespace

int write_report(const LoadedAnalysis& loaded, const std::string& format, std::size_t top, const std::string& output) {
  const report::ReportContext ctx{loaded.command, top};
  std::string page = format == "md" ? report::analysis_markdown(loaded.profile, loaded.analysis, ctx)
                                    : report::analysis_html(loaded.profile, loaded.analysis, ctx);
  return write_output(output, page);
}

Command add_report_command(CLI::App& app) {
  auto opt = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "A report to share: one self-contained HTML page (charts inline, no network), or Markdown.");
  cmd->footer(
      "INPUT is what `kernlens analyze` reads: a run directory of `kernlens profile`, or export files.\n"
      "Examples:\n"
      "  kernlens report runs/llama -o llama.html\n"
      "  kernlens report profile_raw.csv profile_details.csv --format md -o report.md");
  cmd->add_option("INPUT", opt->inputs, "Run directory or export files to read")->required()->type_name("PATH");
  cmd->add_option("-o,--output", opt->output, "Write to FILE instead of stdout ('-')")
      ->type_name("FILE")
      ->capture_default_str();
  cmd->add_option("--format", opt->format, "html: a page with charts; md: the same tables for a pull request")
      ->check(CLI::IsMember({"html", "md"}))
      ->capture_default_str();
  cmd->add_option("--top", opt->top, "Kernels in the tables and charts")->check(CLI::PositiveNumber)->capture_default_str();
  add_rules_option(cmd, opt->rule_files);
  add_analytic_options(cmd, opt->analytic);
  return {cmd, [opt] { return run_report(*opt); }};
}

}  // namespace kernlens::cli
