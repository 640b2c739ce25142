// kernlens report INPUT... -o report.html [--format html|md] [--top N] [--rules FILE]
// kernlens report --db FILE -o across.html [--format html|md] [--top N]
//                 [--model-config config.json --batch B --prompt-tokens P --decode-steps N --runs R]
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kernlens/cli/analytic_options.h"
#include "kernlens/cli/commands.h"
#include "kernlens/report/cross_model_report.h"
#include "kernlens/store/database.h"
#include "kernlens/store/scaling.h"
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
  std::string db;
  load::WorkloadOptions workload;
};

// The page across the database's models; `top` families in its family table.
int write_cross_model_report(const std::string& db_path, const std::string& format, std::size_t top,
                             const std::string& output) {
  auto db = store::open_for_reading(db_path);
  if (!db) return bad_input(db.error());
  auto across = store::load_cross_model(*db, top);
  if (!across) return bad_input(make_error(db_path, 0, across.error().message));
  const std::string name = std::filesystem::path(db_path).filename().string();
  return write_output(output, format == "md" ? report::cross_model_markdown(*across, name)
                                             : report::cross_model_html(*across, name));
}

int run_report(const ReportOptions& opt) {
  if (!opt.db.empty()) {
    if (int rc = check_output_is_no_input(opt.output, {opt.db}); rc != kExitOk) return rc;
    return write_cross_model_report(opt.db, opt.format, opt.top, opt.output);
  }
  if (opt.inputs.empty()) return bad_input(make_error("", 0, "give INPUT (a run directory or export files) or --db FILE"));
  if (int rc = check_output_is_no_input(opt.output, opt.inputs); rc != kExitOk) return rc;
  std::optional<names::KernelClassifier> classifier = load_classifier(opt.rule_files);
  if (!classifier) return kExitBadInput;
  auto loaded = load_inputs(opt.inputs, *classifier, load::LoadOptions{{}, opt.workload});
  if (!loaded) return kExitBadInput;
  return write_report(*loaded, opt.format, opt.top, opt.output);
}

}  // namespace

int write_report(const load::Loaded& loaded, const std::string& format, std::size_t top, const std::string& output) {
  const report::ReportContext ctx{loaded.command(), top};
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
      "  kernlens report profile_raw.csv profile_details.csv --format md -o report.md\n"
      "  kernlens report --db runs.db -o across-models.html   (after kernlens sweep ingest)");
  cmd->add_option("INPUT", opt->inputs, "Run directory or export files to read")->type_name("PATH");
  cmd->add_option("--db", opt->db,
                  "Instead of INPUT: the page across the database's models, batch sizes and sequence lengths "
                  "(op classes and families: SOL and share of time)")
      ->type_name("FILE")
      ->excludes(cmd->get_option("INPUT"));
  cmd->add_option("-o,--output", opt->output, "Write to FILE instead of stdout ('-')")
      ->type_name("FILE")
      ->capture_default_str();
  cmd->add_option("--format", opt->format, "html: a page with charts; md: the same tables for a pull request")
      ->check(CLI::IsMember({"html", "md"}))
      ->capture_default_str();
  cmd->add_option("--top", opt->top, "Kernels in the tables and charts")->check(CLI::PositiveNumber)->capture_default_str();
  add_rules_option(cmd, opt->rule_files);
  add_analytic_options(cmd, opt->workload);
  return {cmd, [opt] { return run_report(*opt); }};
}

}  // namespace kernlens::cli
