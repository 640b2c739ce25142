// kernlens compare BASE... [--vs CANDIDATE...] [--db FILE [--base KEY=VALUE]... [--candidate KEY=VALUE]...]
//                  [--threshold PCT] [--alpha A] [--min-share F] [--normalize MODE] [--tokens SPEC]...
//                  [--format text|json|md|html] [--top N] [-o FILE]
#include <algorithm>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "kernlens/analysis/compare.h"
#include "kernlens/analysis/group_compare.h"
#include "kernlens/cli/commands.h"
#include "kernlens/report/compare_report.h"
#include "kernlens/load/run_record.h"
#include "kernlens/report/group_compare_report.h"
#include "kernlens/rundir/run_key.h"
#include "kernlens/rundir/tags.h"
#include "kernlens/store/database.h"
#include "kernlens/store/run_select.h"

namespace kernlens::cli {
namespace {

struct CompareCliOptions {
  std::vector<std::string> base, candidate, base_tags, candidate_tags, tokens;
  std::string db, format = "text", output = "-", normalize = "auto";
  std::vector<std::string> rule_files;
  analysis::GroupCompareOptions group;
  report::CompareReportOptions report;
};

// A path (or the ranks' inputs joined by ',') is read and analyzed; anything else is a run in
// --db (key, key prefix or run_id).
Result<model::RunRecord> load(const std::string& what, const CompareCliOptions& opt,
                              const names::KernelClassifier& classifier) {
  const auto inputs = rundir::run_inputs(what);
  std::error_code ec;
  auto missing = std::find_if(inputs.begin(), inputs.end(), [&](const auto& p) { return !std::filesystem::exists(p, ec); });
  if (missing == inputs.end()) return load::load_run_record(what, {}, classifier);
  if (inputs.size() > 1) return make_error(*missing, 0, "no such file (one of the ranks' inputs joined by ',')");
  if (opt.db.empty()) return make_error(what, 0, "no such file or run directory (a run in a database needs --db)");
  auto db = store::open_for_reading(opt.db);
  if (!db) return db.error();
  auto run = store::load_run(*db, what);
  if (!run) return make_error(opt.db, 0, run.error().message);
  return run;
}

// The runs named on the command line, then those of --db with the tags asked for.
Result<std::vector<std::string>> side_names(const std::vector<std::string>& named, const std::vector<std::string>& tag_texts,
                                            const std::string& db_path, std::string_view option) {
  std::vector<std::string> names = named;
  if (tag_texts.empty()) return names;
  if (db_path.empty()) return make_error("", 0, fmt::format("{} KEY=VALUE chooses runs in a database: give --db", option));
  auto tags = rundir::parse_tags(tag_texts);
  if (!tags) return make_error("", 0, fmt::format("{}: {}", option, tags.error().message));
  auto db = store::open_for_reading(db_path);
  if (!db) return db.error();
  auto keys = store::run_keys_with_tags(*db, *tags);
  if (!keys) return make_error(db_path, 0, fmt::format("{}: {}", option, keys.error().message));
  names.insert(names.end(), keys->begin(), keys->end());
  return names;
}

// --tokens [base:|candidate:]STAGE=N into the two sides' token counts.
Status parse_tokens(const std::vector<std::string>& specs, analysis::GroupCompareOptions& group) {
  for (const auto& spec : specs) {
    std::string_view text = spec;
    bool base = true, candidate = true;
    for (auto [prefix, only_base] : {std::pair{"base:", true}, std::pair{"candidate:", false}}) {
      if (text.starts_with(prefix)) text.remove_prefix(std::string_view(prefix).size()), base = only_base, candidate = !only_base;
    }
    const auto eq = text.find('=');
    double n = 0;
    const std::string count(eq == std::string_view::npos ? "" : text.substr(eq + 1));
    std::size_t used = 0;
    try {
      n = std::stod(count, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (eq == 0 || eq == std::string_view::npos || used != count.size() || count.empty() || !(n > 0)) {
      return make_error("", 0, fmt::format("--tokens {}: expected [base:|candidate:]STAGE=N with N > 0 (tokens per "
                                           "repetition, or per run without --repeat)", spec));
    }
    const std::string stage(text.substr(0, eq));
    if (base) group.base_tokens[stage] = n;
    if (candidate) group.candidate_tokens[stage] = n;
  }
  return ok_status();
}

std::string classic_output(const analysis::Comparison& c, const CompareCliOptions& opt) {
  if (opt.format == "json") return report::compare_json(c);
  if (opt.format == "md") return report::compare_markdown(c, opt.report);
  return report::compare_text(c, opt.report);
}

std::string group_output(const analysis::GroupComparison& c, const CompareCliOptions& opt) {
  if (opt.format == "json") return report::group_compare_json(c);
  if (opt.format == "md") return report::group_compare_markdown(c, opt.report);
  if (opt.format == "html") return report::group_compare_html(c, opt.report);
  return report::group_compare_text(c, opt.report);
}

// One run against one, neither repeated: the pair's own tables (compare.h), normalised when asked.
Result<std::pair<std::string, analysis::CompareVerdict>> compare_pair(const model::RunRecord& base, const model::RunRecord& candidate,
                                                               const CompareCliOptions& opt) {
  std::string reason;
  auto n = analysis::choose_normalization(base, candidate, opt.group.normalization, reason);
  auto b = analysis::normalize_run(base, n, analysis::token_counts(base, false, opt.group.base_tokens));
  if (!b) return b.error();
  auto c = analysis::normalize_run(candidate, n, analysis::token_counts(candidate, false, opt.group.candidate_tokens));
  if (!c) return c.error();
  auto comparison = analysis::compare_runs(*b, *c, opt.group.compare);
  comparison.normalization = analysis::normalization_name(n);
  comparison.normalization_reason = reason;
  return std::pair{classic_output(comparison, opt), comparison.verdict};
}

int run_compare(CompareCliOptions& opt) {
  if (opt.candidate.empty() && opt.candidate_tags.empty() && opt.base.size() == 2) {
    opt.candidate = {opt.base.back()};  // `compare BASE CANDIDATE`
    opt.base.pop_back();
  }
  std::vector<std::string> inputs = opt.base;
  inputs.insert(inputs.end(), opt.candidate.begin(), opt.candidate.end());
  inputs.push_back(opt.db);
  if (int rc = check_output_is_no_input(opt.output, inputs); rc != kExitOk) return rc;
  if (opt.normalize != "auto") {
    auto n = analysis::parse_normalization(opt.normalize);
    if (!n) return bad_input(n.error());
    opt.group.normalization = *n;
  }
  if (Status s = parse_tokens(opt.tokens, opt.group); !s) return bad_input(s.error());
  auto base_names = side_names(opt.base, opt.base_tags, opt.db, "--base");
  if (!base_names) return bad_input(base_names.error());
  auto candidate_names = side_names(opt.candidate, opt.candidate_tags, opt.db, "--candidate");
  if (!candidate_names) return bad_input(candidate_names.error());
  // `--vs --threshold 1`: with no run after it, --vs took the next option for a run.
  for (const auto& name : opt.candidate) {
    std::error_code ec;
    if (name.starts_with("-") && !std::filesystem::exists(name, ec)) {
      return bad_input(make_error("", 0, fmt::format("--vs needs the candidate runs right after it; '{}' is an option "
                                                     "(BASE... --vs CANDIDATE... [OPTIONS])",
                                                     name)));
    }
  }
  if (base_names->empty() || candidate_names->empty()) {
    return bad_input(make_error("", 0, "compare needs a base and a candidate: BASE CANDIDATE, BASE... --vs CANDIDATE..., "
                                       "or --db FILE --base KEY=VALUE --candidate KEY=VALUE"));
  }
  std::optional<names::KernelClassifier> classifier = load_classifier(opt.rule_files);
  if (!classifier) return kExitBadInput;
  std::deque<model::RunRecord> runs;  // a deque: the pointers below stay valid as it grows
  std::vector<const model::RunRecord*> base, candidate;
  for (auto [names, side] : {std::pair{&*base_names, &base}, std::pair{&*candidate_names, &candidate}}) {
    for (const auto& name : *names) {
      auto run = load(name, opt, *classifier);
      if (!run) return bad_input(run.error());
      side->push_back(&runs.emplace_back(std::move(run).value()));
    }
  }
  const bool pair = base.size() == 1 && candidate.size() == 1 && base[0]->repetitions.empty() &&
                    candidate[0]->repetitions.empty() && opt.format != "html";
  std::string out;
  analysis::CompareVerdict verdict;
  if (pair) {
    auto result = compare_pair(*base[0], *candidate[0], opt);
    if (!result) return bad_input(result.error());
    std::tie(out, verdict) = std::move(result).value();
  } else {
    auto comparison = analysis::compare_groups(base, candidate, opt.group);
    if (!comparison) return bad_input(comparison.error());
    if (Status s = analysis::check_noise_floor(*comparison); !s) return bad_input(s.error());
    out = group_output(*comparison, opt);
    verdict = comparison->verdict;
  }
  if (int rc = write_output(opt.output, out); rc != kExitOk) return rc;
  return verdict == analysis::CompareVerdict::kRegression ? kExitGateFailed : kExitOk;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto opt = std::make_shared<CompareCliOptions>();
  CLI::App* cmd = app.add_subcommand("compare", "Before/after: which kernels and stages moved, and a verdict.");
  cmd->footer(
      "BASE and CANDIDATE are run directories, export files, or runs in --db (a run key, its\n"
      "prefix, or run_id). Kernels match by name, then by base name and launch shape.\n"
      "A multi-rank job is one run given as its ranks' inputs joined by ',' (rank-0.json.gz,\n"
      "rank-1.json.gz): when both runs have several ranks, each rank's kernel time, communication,\n"
      "exposed communication and stage times are compared too (ranks matched by number).\n"
      "Groups: several runs per side (BASE... --vs CANDIDATE...), runs chosen in --db by tags\n"
      "(--base KEY=VALUE, --candidate KEY=VALUE), or runs made with `profile --repeat N` (each\n"
      "repetition a sample). Each row then shows the two medians and the change with a\n"
      "(1 - --alpha) bootstrap interval; a change is a regression only when it is larger than\n"
      "--threshold AND its interval excludes no change. A --threshold tighter than the noise\n"
      "floor (each group against its own halves) is refused. One run against one has no statistics.\n"
      "When the runs' work differs (batch, prompt, decode steps, tokens.* tags), figures are per\n"
      "token (--normalize auto); tokens per stage come from llm_stages.py's arguments, the\n"
      "runs' tokens.STAGE tags, or --tokens.\n"
      "Exit code 1 when the total kernel time, or a kernel weighing at least --min-share of\n"
      "the time, grew by more than --threshold percent (and significantly, with statistics).\n"
      "Examples:\n"
      "  kernlens compare examples/data/runs/llama_prefill examples/data/runs/qwen_prefill\n"
      "  kernlens compare runs/a1 runs/a2 runs/a3 --vs runs/b1 runs/b2 runs/b3 --format md -o comment.md\n"
      "  kernlens compare --db runs.db --base batch=4 --candidate batch=8 --normalize token\n"
      "  kernlens compare --db runs.db llama qwen --format md -o comment.md");
  cmd->add_option("BASE", opt->base, "The runs before (with one CANDIDATE and no --vs: BASE CANDIDATE)");
  CLI::Option* vs = cmd->add_option("--vs", opt->candidate, "The runs after")->type_name("CANDIDATE...");
  // main.cpp gives every option one value per occurrence (keep_separators); --vs takes all the
  // runs after it, so it gets its several values back when compare's own parsing starts.
  cmd->preparse_callback([vs](std::size_t) { vs->allow_extra_args(true); });
  cmd->add_option("--db", opt->db, "Database holding runs named by key")->type_name("FILE");
  cmd->add_option("--base", opt->base_tags, "Base runs: those in --db with this tag; repeat for more tags")
      ->type_name("KEY=VALUE");
  cmd->add_option("--candidate", opt->candidate_tags, "Candidate runs: those in --db with this tag; repeat for more")
      ->type_name("KEY=VALUE");
  cmd->add_option("--threshold", opt->group.compare.threshold_pct, "Percent of growth that is a regression")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--alpha", opt->group.bootstrap.alpha,
                  "Significance level: a change counts when its (1 - alpha) interval excludes no change")
      ->check(CLI::Range(0.001, 0.5))
      ->capture_default_str();
  cmd->add_option("--min-share", opt->group.compare.min_share,
                  "Kernels lighter than this share (0..1) of both runs' time are not judged alone")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--normalize", opt->normalize,
                  "Figures per token, launch or GFLOP; auto: per token when the runs' work differs")
      ->check(CLI::IsMember({"auto", "none", "token", "launch", "flop"}))
      ->capture_default_str();
  cmd->add_option("--tokens", opt->tokens,
                  "Tokens a stage processes per repetition (per run without --repeat), both sides or one "
                  "(base:STAGE=N); repeat for more")
      ->type_name("[SIDE:]STAGE=N");
  cmd->add_option("--format", opt->format, "Output format (html: groups' tables with their intervals)")
      ->check(CLI::IsMember({"text", "json", "md", "html"}))
      ->capture_default_str();
  cmd->add_option("--top", opt->report.top, "Kernels to list in text, md and html (0: all)")->capture_default_str();
  cmd->add_option("-o,--output", opt->output, "Write to FILE instead of stdout ('-')")->type_name("FILE");
  add_rules_option(cmd, opt->rule_files);
  return {cmd, [opt] { return run_compare(*opt); }};
}

}  // namespace kernlens::cli
