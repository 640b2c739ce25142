#include "kernlens/profile/profile_run.h"

#include <unistd.h>

#include <charconv>
#include <chrono>
#include <filesystem>
#include <ostream>
#include <unordered_set>

#include <fmt/format.h>

#include "kernlens/analysis/aggregate.h"
#include "kernlens/common/exit_codes.h"
#include "kernlens/common/file.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/profile/deep_join.h"
#include "kernlens/profile/env_probe.h"
#include "kernlens/profile/kernels_csv.h"
#include "kernlens/profile/nvtx_path.h"
#include "kernlens/profile/process.h"
#include "kernlens/profile/progress.h"
#include "kernlens/profile/run_dir.h"
#include "kernlens/profile/run_reader.h"
#include "kernlens/profile/tools.h"
#include "kernlens/profile/tracer_command.h"
#include "kernlens/report/json_report.h"
#include "kernlens/report/text_report.h"

extern char** environ;

namespace kernlens::profile {
namespace {

constexpr std::string_view kDeepPlaceholder = "regex:<THE KERNELS DISCOVERY SELECTS>";
constexpr std::string_view kDeepIdPlaceholder = "::regex:<THE KERNELS DISCOVERY SELECTS>:<LAUNCH NUMBER>";

struct Run {
  Run(const ProfileRunOptions& o, const names::KernelClassifier& c, std::ostream& o_out, std::ostream& o_err)
      : opt(o), classifier(c), out(o_out), err(o_err) {}

  const ProfileRunOptions& opt;
  const names::KernelClassifier& classifier;
  std::ostream& out;
  std::ostream& err;
  RunDir dir;
  Manifest manifest;
  NcuSettings ncu;
  std::string nsys;  // empty: not found
  TracerPaths tracer;  // set for tracer discovery
  Discovery discovery = Discovery::kNcu;
  bool interrupted = false;  // a run ended because the user interrupted kernlens
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  void note(const std::string& line) { err << "kernlens: " << line << "\n" << std::flush; }
  void save() {
    if (Status s = write_manifest(dir, manifest); !s) note("warning: " + s.error().to_string());
  }
  // Ends the run: the manifest says how, and the exit code follows DESIGN.md §3.
  ProfileRunResult finish(int exit_code, std::string status, std::string reason) {
    manifest.status = interrupted ? "interrupted" : std::move(status);
    manifest.status_reason = reason;
    save();
    if (!reason.empty()) err << "kernlens: error: " << reason << "\n";
    err << "kernlens: run directory " << dir.root.string() << " (" << manifest.status << ")\n";
    return {exit_code, dir.root.string()};
  }
};

std::string relative(const RunDir& dir, const std::filesystem::path& p) {
  return std::filesystem::relative(p, dir.root).string();
}

struct StepOutcome {
  ProcessResult result;
  bool no_kernels_profiled = false;  // ncu said so (and still exits 0)
};

// Runs one profiler step, logs in `folder/<stem>.stdout.log` / `.stderr.log` (or stdout into
// `stdout_file`), recorded in the manifest as it ends.
Result<StepOutcome> run_step(Run& run, const std::string& step, const std::vector<std::string>& argv,
                             const std::filesystem::path& folder, const std::string& stem, bool echo,
                             const std::function<void(const NcuEvent&)>& on_event = {},
                             const std::filesystem::path& stdout_file = {},
                             const std::vector<std::string>& env = {}) {
  ProcessOptions p;
  p.argv = argv;
  p.env = env;
  p.stdout_log_path = (stdout_file.empty() ? folder / (stem + ".stdout.log") : stdout_file).string();
  p.stderr_log_path = (folder / (stem + ".stderr.log")).string();
  p.timeout_ns = static_cast<std::int64_t>(run.opt.timeout_s * 1e9);
  StepOutcome outcome;
  // The program's own lines are echoed to stderr (stdout is for the report); ncu's own
  // lines drive the progress display instead and stay in the logs.
  p.on_line = [&](OutputStream, std::string_view line) {
    if (!line.starts_with("==")) {
      if (echo) run.err << line << "\n";
      return;
    }
    for (const auto& e : parse_ncu_line(line)) {
      if (e.kind == NcuEventKind::kNoKernelsProfiled) outcome.no_kernels_profiled = true;
      if (e.kind == NcuEventKind::kError) run.note("ncu: " + e.text);
      if (on_event) on_event(e);
    }
  };
  auto result = run_process(p);
  ToolRun record;
  record.step = step;
  record.argv = argv;
  if (!result) {
    record.exit_code = std::nullopt;
    run.manifest.runs.push_back(record);
    return result.error();
  }
  outcome.result = *result;
  record.exit_code = result->exit_code;
  record.signal = result->term_signal;
  record.timed_out = result->timed_out;
  record.interrupted = result->interrupted;
  run.interrupted = run.interrupted || result->interrupted;
  record.wall_ns = result->wall_ns;
  record.stdout_log = relative(run.dir, p.stdout_log_path);
  record.stderr_log = relative(run.dir, p.stderr_log_path);
  run.manifest.runs.push_back(record);
  run.manifest.step_wall_ns[step] += result->wall_ns;
  run.save();
  return outcome;
}

// Why a step's run is not usable, or empty when it is.
std::string failure(const std::string& step, const StepOutcome& o) {
  if (o.result.succeeded()) return {};
  return fmt::format("{}: {} (logs in the run directory)", step, o.result.describe());
}


// The user's stage paths, as ncu --nvtx-include expressions.
Result<std::vector<std::string>> nvtx_filters(const ProfileRunOptions& opt) {
  std::vector<std::string> filters;
  for (const auto& path : opt.nvtx_include) {
    auto e = nvtx_include_expression(path);
    if (!e) return e.error();
    filters.push_back(*e);
  }
  for (const auto& range : opt.nvtx_ranges) {
    auto e = nvtx_range_expression(range);
    if (!e) return e.error();
    filters.push_back(*e);
  }
  return filters;
}

std::vector<std::string> nsys_profile_argv(const Run& run) {
  std::vector<std::string> argv = {run.nsys, "profile", "--trace=cuda,nvtx", "--sample=none", "--cpuctxsw=none",
                                   "--force-overwrite=true", "-o", (run.dir.discovery / "timeline").string()};
  argv.insert(argv.end(), run.opt.command.begin(), run.opt.command.end());
  return argv;
}

std::vector<std::string> nsys_export_argv(const Run& run) {
  return {run.nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o",
          (run.dir.discovery / "timeline.sqlite").string(), (run.dir.discovery / "timeline.nsys-rep").string()};
}

std::vector<std::string> tracer_env(const Run& run) {
  return tracer_environment(run.tracer, run.dir.discovery.string());
}

// The program under the tracer: every process it starts writes discovery/kernlens-<pid>.kltrace.
std::string discover_with_tracer(Run& run, std::vector<std::string>& inputs) {
  auto prof = run_step(run, "discovery", run.opt.command, run.dir.discovery, "tracer", run.opt.echo_program_output,
                       {}, {}, tracer_env(run));
  if (!prof) return prof.error().to_string();
  if (auto why = failure("discovery (program under the kernlens tracer)", *prof); !why.empty()) return why;
  inputs = tracer_outputs(run.dir.discovery.string());
  if (inputs.empty()) {
    return "discovery: the tracer wrote no kernlens-*.kltrace (the program used no CUDA, or CUDA did not load the "
           "tracer: see discovery/tracer.stderr.log)";
  }
  return {};
}

// Discovery: every launch timed, into `timeline`. Returns the failure reason, or empty.
std::string discover(Run& run, model::Profile& timeline) {
  std::string input;
  std::vector<std::string> tracer_inputs;
  if (run.discovery == Discovery::kTracer) {
    if (auto why = discover_with_tracer(run, tracer_inputs); !why.empty()) return why;
  } else if (run.discovery == Discovery::kNsys) {
    auto prof = run_step(run, "discovery", nsys_profile_argv(run), run.dir.discovery, "nsys", run.opt.echo_program_output);
    if (!prof) return prof.error().to_string();
    if (auto why = failure("discovery (nsys profile)", *prof); !why.empty()) return why;
    auto exp = run_step(run, "discovery export", nsys_export_argv(run), run.dir.discovery, "nsys_export", false);
    if (!exp) return exp.error().to_string();
    if (auto why = failure("discovery (nsys export)", *exp); !why.empty()) return why;
    input = (run.dir.discovery / "timeline.sqlite").string();
  } else {
    std::uint64_t timed = 0;
    auto on_event = [&](const NcuEvent& e) {
      if (e.kind != NcuEventKind::kProfiling || !e.passes) return;
      ++timed;
      if (run.opt.progress_tty) run.err << fmt::format("\rkernlens: discovery: {} launches timed, {}", timed, format_elapsed(run.elapsed_s())) << std::flush;
    };
    auto argv = discovery_argv(run.ncu, (run.dir.discovery / "timing").string(), run.opt.command);
    auto prof = run_step(run, "discovery", argv, run.dir.discovery, "ncu_timing", run.opt.echo_program_output, on_event);
    if (run.opt.progress_tty) run.err << "\n";
    if (!prof) return prof.error().to_string();
    if (auto why = failure("discovery (ncu timing mode)", *prof); !why.empty()) return why;
    if (prof->no_kernels_profiled) return "discovery: ncu profiled no kernel (check --nvtx-include and the program)";
    input = (run.dir.discovery / "timing_raw.csv").string();
    auto exports = export_argvs(run.ncu.ncu, (run.dir.discovery / "timing.ncu-rep").string());
    auto exp = run_step(run, "discovery export", exports[0], run.dir.discovery, "timing_export", false, {}, input);
    if (!exp) return exp.error().to_string();
    if (auto why = failure("discovery (ncu export)", *exp); !why.empty()) return why;
  }
  // nsys and the tracer record every launch; ncu filtered them by --nvtx-include itself.
  const bool filter_stages = run.discovery != Discovery::kNcu;
  Status s = read_discovery(tracer_inputs.empty() ? std::vector<std::string>{input} : tracer_inputs,
                            run.opt.nvtx_include, filter_stages, timeline, analysis_read_options());
  return s ? std::string() : s.error().to_string();
}

// The deep pass: one ncu run per invocation of the selection, each exported. Returns the CSV
// files written; `why` is set when a run failed or was interrupted.
std::vector<std::string> deep_pass(Run& run, const Selection& selection, std::string& why) {
  std::uint64_t planned = 0;
  for (const auto& inv : selection.invocations) planned += inv.launch_count;
  DeepProgress progress(planned, run.opt.progress_tty);
  std::vector<std::string> csvs;
  for (std::size_t i = 0; i < selection.invocations.size(); ++i) {
    const NcuInvocation& inv = selection.invocations[i];
    const std::string stem = fmt::format("deep_{}", i + 1);
    DeepInvocation d{std::string(to_string(selection.name_base)), inv.kernel_name, inv.kernel_id, inv.launch_skip,
                     inv.launch_count, (run.dir.deep / stem).string()};
    auto on_event = [&](const NcuEvent& e) { run.err << progress.on_event(e, run.elapsed_s()) << std::flush; };
    const std::string step = fmt::format("deep {}/{}", i + 1, selection.invocations.size());
    auto result = run_step(run, step, deep_argv(run.ncu, run.opt.tier, run.opt.replay, d, run.opt.command), run.dir.deep,
                           stem, false, on_event);
    if (!result) {
      why = result.error().to_string();
      break;
    }
    if (why = failure(step, *result); !why.empty()) break;
    if (result->no_kernels_profiled) {
      run.note(fmt::format("warning: {}: ncu profiled no kernel ({})", step, inv.kernel_name));
      continue;
    }
    auto exports = export_argvs(run.ncu.ncu, d.report_base + ".ncu-rep");
    const std::string pages[] = {"raw", "details"};
    for (std::size_t page = 0; page < exports.size() && why.empty(); ++page) {
      auto csv = run.dir.deep / fmt::format("{}_{}.csv", stem, pages[page]);
      auto exp = run_step(run, step + " export " + pages[page], exports[page], run.dir.deep,
                          fmt::format("{}_export_{}", stem, pages[page]), false, {}, csv);
      if (!exp) why = exp.error().to_string();
      else if (why = failure(step + " export", *exp); why.empty()) csvs.push_back(csv.string());
    }
    if (!why.empty()) break;
  }
  run.err << progress.finish(run.elapsed_s()) << std::flush;
  return csvs;
}

nlohmann::ordered_json options_json(const ProfileRunOptions& opt, Discovery discovery) {
  static constexpr std::string_view kDiscovery[] = {"auto", "nsys", "tracer", "ncu"};
  nlohmann::ordered_json j;
  j["discovery"] = kDiscovery[static_cast<int>(discovery)];
  j["tier"] = tier_spec(opt.tier).name;
  j["replay_mode"] = to_string(opt.replay);
  j["coverage"] = opt.selection.coverage;
  j["top"] = opt.selection.top;
  j["nvtx_include"] = opt.nvtx_include;
  j["nvtx_ranges"] = opt.nvtx_ranges;
  j["timeout_s"] = opt.timeout_s;
  return j;
}

// Finds ncu (needed) and nsys (for nsys discovery), and settles the discovery method.
Status find_tools(Run& run, nlohmann::ordered_json& tools) {
  auto ncu = locate_tool(ProfilerTool::kNcu, {run.opt.ncu_path, {}, true});
  if (!ncu) return make_error("", 0, ncu.error().message + "; give its path with --ncu");
  run.ncu.ncu = *ncu;
  auto ncu_info = probe_tool(*ncu);
  tools["ncu"] = {{"path", *ncu}, {"version", ncu_info ? ncu_info->version.text : "unknown"}};
  // A tier's sections that this ncu does not have are left out rather than failing the run.
  if (auto sections = query_ncu_sections(*ncu)) {
    for (const auto& section : *sections) run.ncu.available_sections.push_back(section.identifier);
    for (auto wanted : tier_spec(run.opt.tier).sections) {
      if (!section_available(run.ncu, wanted)) {
        run.note(fmt::format("warning: {} has no section {}: the deep pass goes without it", *ncu, wanted));
      }
    }
  } else {
    run.note("warning: " + sections.error().to_string() + "; the tier's sections are passed as they are");
  }
  const bool nsys_wanted = run.opt.discovery == Discovery::kNsys || run.opt.discovery == Discovery::kAuto;
  if (nsys_wanted) {
    if (auto nsys = locate_tool(ProfilerTool::kNsys, {run.opt.nsys_path, {}, true})) {
      run.nsys = *nsys;
      auto info = probe_tool(*nsys);
      tools["nsys"] = {{"path", *nsys}, {"version", info ? info->version.text : "unknown"}};
    } else if (run.opt.discovery == Discovery::kNsys) {
      return make_error("", 0, nsys.error().message + "; give its path with --nsys, or use --discovery ncu");
    }
  }
  run.discovery = run.opt.discovery;
  if (run.opt.discovery == Discovery::kTracer || (run.opt.discovery == Discovery::kAuto && run.nsys.empty())) {
    auto tracer = locate_tracer(run.opt.tracer_path, executable_dir());
    if (tracer) {
      run.tracer = *tracer;
      tools["tracer"] = {{"path", tracer->library}, {"version", KERNLENS_VERSION}};
      run.discovery = Discovery::kTracer;
    } else if (run.opt.discovery == Discovery::kTracer) {
      return make_error("", 0, "--discovery tracer: " + tracer.error().message);
    }
  }
  if (run.discovery == Discovery::kAuto) run.discovery = run.nsys.empty() ? Discovery::kNcu : Discovery::kNsys;
  return ok_status();
}

void print_dry_run(Run& run, const nlohmann::ordered_json& tools, const nlohmann::ordered_json& environment) {
  run.out << "# kernlens profile --dry-run: the commands a run would use; nothing is run\n";
  for (const auto& [name, info] : tools.items()) {
    run.out << fmt::format("# {}: {} ({})\n", name, info["path"].get<std::string>(), info["version"].get<std::string>());
  }
  run.out << "# environment: " << environment.dump() << "\n";
  run.out << "# run directory: " << run.dir.root.string() << "\n# discovery\n";
  if (run.discovery == Discovery::kTracer) {
    std::vector<std::string> argv = {"env"};
    for (const auto& variable : tracer_env(run)) argv.push_back(variable);
    argv.insert(argv.end(), run.opt.command.begin(), run.opt.command.end());
    run.out << shell_join(argv) << "\n";
  } else if (run.discovery == Discovery::kNsys) {
    run.out << shell_join(nsys_profile_argv(run)) << "\n" << shell_join(nsys_export_argv(run)) << "\n";
  } else {
    run.out << shell_join(discovery_argv(run.ncu, (run.dir.discovery / "timing").string(), run.opt.command)) << "\n";
    run.out << shell_join(export_argvs(run.ncu.ncu, (run.dir.discovery / "timing.ncu-rep").string())[0]) << "\n";
  }
  run.out << "# deep pass: one ncu run per group of the kernels discovery selects (shown for the first; the\n"
             "# kernels, the launch number they share and --launch-count, one per kernel, come from discovery)\n";
  DeepInvocation d{"mangled", std::string(kDeepPlaceholder), std::string(kDeepIdPlaceholder), 0, 1,
                   (run.dir.deep / "deep_1").string()};
  run.out << shell_join(deep_argv(run.ncu, run.opt.tier, run.opt.replay, d, run.opt.command)) << "\n";
  for (const auto& argv : export_argvs(run.ncu.ncu, d.report_base + ".ncu-rep")) run.out << shell_join(argv) << "\n";
}

std::string selection_summary(const Selection& s) {
  return fmt::format("deep pass: {} kernels, {:.1f}% of {:.3f} ms of kernel time, in {} ncu runs", s.picks.size(),
                     s.total_kernel_ns > 0 ? 100 * s.covered_ns / s.total_kernel_ns : 0.0, s.total_kernel_ns * 1e-6,
                     s.invocations.size());
}

}  // namespace

std::optional<int> launcher_rank(char** environ_list) {
  static constexpr std::string_view kRankVariables[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID",
                                                        "LOCAL_RANK"};
  for (auto variable : kRankVariables) {
    for (char** e = environ_list; e && *e; ++e) {
      std::string_view entry(*e);
      if (!entry.starts_with(variable) || entry.size() <= variable.size() || entry[variable.size()] != '=') continue;
      std::string_view value = entry.substr(variable.size() + 1);
      int rank = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), rank);
      if (ec != std::errc() || end != value.data() + value.size() || rank < 0) return std::nullopt;
      return rank;
    }
  }
  return std::nullopt;
}

Result<Discovery> parse_discovery(std::string_view name) {
  static constexpr std::pair<std::string_view, Discovery> kNames[] = {
      {"auto", Discovery::kAuto}, {"nsys", Discovery::kNsys}, {"tracer", Discovery::kTracer}, {"ncu", Discovery::kNcu}};
  for (const auto& [n, d] : kNames) {
    if (n == name) return d;
  }
  return make_error("", 0, fmt::format("unknown discovery '{}': expected auto, nsys, tracer or ncu", name));
}

Result<std::string> nvtx_include_expression(std::string_view user_path) {
  NvtxPath path = parse_nvtx_path(user_path, true);
  for (const auto& name : path.ranges) {
    if (name.empty()) return make_error("", 0, fmt::format("--nvtx-include '{}': an empty range name", user_path));
  }
  return nvtx_push_pop_filter(path.domain, path.ranges);
}

Result<std::string> nvtx_range_expression(std::string_view user_range) {
  NvtxPath path = parse_nvtx_path(user_range, false);
  if (path.ranges[0].empty()) return make_error("", 0, fmt::format("--nvtx-range '{}': an empty range name", user_range));
  return nvtx_start_end_filter(path.domain, path.ranges);
}

ProfileRunResult run_profile(const ProfileRunOptions& opt, const names::KernelClassifier& classifier,
                             std::ostream& out, std::ostream& err) {
  Run run(opt, classifier, out, err);
  auto filters = nvtx_filters(opt);
  if (!filters) {
    err << "kernlens: error: " << filters.error().to_string() << "\n";
    return {kExitBadInput, {}};
  }
  run.ncu.clock_control = opt.clock_control;
  run.ncu.nvtx_include = *filters;
  // Application replay runs the program once per pass: ending it early would cut passes short.
  run.ncu.kill_after_last = opt.kill_after_last && opt.replay == ReplayMode::kKernel;
  nlohmann::ordered_json tools = nlohmann::ordered_json::object();
  if (Status s = find_tools(run, tools); !s) {
    err << "kernlens: error: " << s.error().to_string() << "\n";
    return {kExitBadInput, {}};
  }
  const std::string run_id = opt.run_id.empty() ? make_run_id(std::chrono::system_clock::now(), opt.command[0]) : opt.run_id;
  const nlohmann::ordered_json environment = probe_environment(opt.command);
  if (opt.dry_run) {
    run.dir = RunDir{run_id, std::filesystem::path(opt.out) / run_id, std::filesystem::path(opt.out) / run_id / "discovery",
                     std::filesystem::path(opt.out) / run_id / "deep"};
    print_dry_run(run, tools, environment);
    return {kExitOk, {}};
  }
  auto dir = create_run_dir(opt.out, run_id);
  if (!dir) {
    err << "kernlens: error: " << dir.error().to_string() << "\n";
    return {kExitBadInput, {}};
  }
  run.dir = *dir;
  run.manifest.run_id = run_id;
  run.manifest.command = opt.command;
  run.manifest.cwd = std::filesystem::current_path().string();
  run.manifest.env = env_subset(environ);
  run.manifest.tools = tools;
  run.manifest.tools["environment"] = environment;
  run.manifest.clock_control = std::string(to_string(opt.clock_control));
  run.manifest.options = options_json(opt, run.discovery);
  run.save();

  model::Profile timeline;
  if (auto why = discover(run, timeline); !why.empty()) return run.finish(kExitToolFailed, "failed", why);
  if (!timeline.devices.empty()) run.manifest.tools["gpu"] = timeline.devices[0].name;
  auto agg = analysis::aggregate(timeline, classifier);
  auto selection = select_kernels(timeline, agg, opt.selection);
  if (!selection) return run.finish(kExitToolFailed, "failed", "selection: " + selection.error().to_string());
  std::unordered_set<std::string> chosen;
  for (const auto& pick : selection->picks) chosen.insert(timeline.names[pick.name]);
  if (Status s = write_file_atomically((run.dir.discovery / "kernels.csv").string(), kernels_csv(timeline, agg, chosen)); !s) {
    return run.finish(kExitBadInput, "failed", s.error().to_string());
  }
  run.note(selection_summary(*selection));
  for (const auto& note : selection->notes) run.note(note);
  run.manifest.options["selection"] = {{"kernels", selection->picks.size()},
                                       {"covered_ns", selection->covered_ns},
                                       {"total_kernel_ns", selection->total_kernel_ns},
                                       {"ncu_runs", selection->invocations.size()},
                                       {"kernel_name_base", to_string(selection->name_base)}};
  std::string why;
  auto csvs = deep_pass(run, *selection, why);
  if (why.empty() && csvs.empty()) {
    why = "the deep pass measured no kernel: ncu's kernel filters matched nothing (deep/*.stdout.log lists "
          "what ncu saw)";
  }
  for (const auto& warning : join_deep_exports(csvs, timeline, analysis_read_options())) run.note("warning: " + warning);
  auto analysis = analysis::analyze(timeline, classifier, opt.analysis);
  if (!analysis) return run.finish(kExitBadInput, "failed", analysis.error().to_string());
  if (Status s = write_file_atomically(run.dir.analysis().string(), report::analysis_json(timeline, *analysis, {})); !s) {
    return run.finish(kExitBadInput, "failed", s.error().to_string());
  }
  out << report::analysis_text(timeline, *analysis, report::TextOptions{20, 100});
  if (!why.empty()) {
    return run.finish(kExitToolFailed, "failed", why);
  }
  return run.finish(kExitOk, "complete", "");
}

}  // namespace kernlens::profile
