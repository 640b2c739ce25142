// kernlens compare BASE CANDIDATE [--db FILE] [--threshold PCT] [--min-share F]
//                  [--format text|json|md] [--top N] [-o FILE]
#include <filesystem>
#include <memory>
#include <string>

#include "kernlens/analysis/compare.h"
#include "kernlens/cli/commands.h"
#include "kernlens/report/compare_report.h"
#include "kernlens/load/run_record.h"
#include "kernlens/store/database.h"

namespace kernlens::cli {
namespace {

struct CompareCliOptions {
  std::string base, candidate, db, format = "text", output = "-";
  std::vector<std::string> rule_files;
  analysis::CompareOptions compare;
  report::CompareReportOptions report;
};

// A path is read and analyzed; anything else is a run in --db (key, key prefix or run_id).
Result<model::RunRecord> load(const std::string& what, const CompareCliOptions& opt,
                              const names::KernelClassifier& classifier) {
  std::error_code ec;
  if (std::filesystem::exists(what, ec)) return load::load_run_record(what, {}, classifier);
  if (opt.db.empty()) return make_error(what, 0, "no such file or run directory (a run in a database needs --db)");
  auto db = store::open_for_reading(opt.db);
  if (!db) return db.error();
  auto run = store::load_run(*db, what);
  if (!run) return make_error(opt.db, 0, run.error().message);
  return run;
}

int run_compare(const CompareCliOptions& opt) {
  if (int rc = check_output_is_no_input(opt.output, {opt.base, opt.candidate, opt.db}); rc != kExitOk) return rc;
  std::optional<names::KernelClassifier> classifier = load_classifier(opt.rule_files);
  if (!classifier) return kExitBadInput;
  auto base = load(opt.base, opt, *classifier);
  if (!base) return bad_input(base.error());
  auto candidate = load(opt.candidate, opt, *classifier);
  if (!candidate) return bad_input(candidate.error());
  auto comparison = analysis::compare_runs(*base, *candidate, opt.compare);
  std::string out;
  if (opt.format == "json") {
    out = report::compare_json(comparison);
  } else if (opt.format == "md") {
    out = report::compare_markdown(comparison, opt.report);
  } else {
    out = report::compare_text(comparison, opt.report);
  }
  if (int rc = write_output(opt.output, out); rc != kExitOk) return rc;
  return comparison.verdict == analysis::CompareVerdict::kRegression ? kExitGateFailed : kExitOk;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto opt = std::make_shared<CompareCliOptions>();
  CLI::App* cmd = app.add_subcommand("compare", "Before/after: which kernels and stages moved, and a verdict.");
  cmd->footer(
      "BASE and CANDIDATE are run directories, export files, or runs in --db (a run key, its\n"
      "prefix, or run_id). Kernels match by name, then by base name and launch shape.\n"
      "Exit code 1 when the total kernel time, or a kernel weighing at least --min-share of\n"
      "the time, grew by more than --threshold percent: a CI gate.\n"
      "Examples:\n"
      "  kernlens compare examples/data/runs/llama_prefill examples/data/runs/qwen_prefill\n"
      "  kernlens compare --db runs.db llama qwen --format md -o comment.md");
  cmd->add_option("BASE", opt->base, "The run before")->required();
  cmd->add_option("CANDIDATE", opt->candidate, "The run after")->required();
  cmd->add_option("--db", opt->db, "Database holding runs named by key")->type_name("FILE");
  cmd->add_option("--threshold", opt->compare.threshold_pct, "Percent of growth that is a regression")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--min-share", opt->compare.min_share,
                  "Kernels lighter than this share (0..1) of both runs' time are not judged alone")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--format", opt->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "md"}))
      ->capture_default_str();
  cmd->add_option("--top", opt->report.top, "Kernels to list in text and md (0: all)")->capture_default_str();
  cmd->add_option("-o,--output", opt->output, "Write to FILE instead of stdout ('-')")->type_name("FILE");
  add_rules_option(cmd, opt->rule_files);
  return {cmd, [opt] { return run_compare(*opt); }};
}

}  // namespace kernlens::cli
