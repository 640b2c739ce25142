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
#include "kernlens/common/shell.h"
#include "kernlens/profile/comm_kernels.h"
#include "kernlens/profile/deep_pass.h"
#include "kernlens/profile/discovery.h"
#include "kernlens/profile/early_start.h"
#include "kernlens/profile/env_probe.h"
#include "kernlens/load/nvtx_path.h"
#include "kernlens/load/timeline.h"
#include "kernlens/profile/kernels_csv.h"
#include "kernlens/names/mangled.h"
#include "kernlens/profile/rank_lockstep.h"
#include "kernlens/profile/run_context.h"
#include "kernlens/profile/tools.h"
#include "kernlens/rundir/manifest.h"

extern char** environ;

namespace kernlens::profile {
namespace {

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

nlohmann::ordered_json options_json(const ProfileRunOptions& opt) {
  nlohmann::ordered_json j;
  j["discovery"] = discovery_name(opt.discovery);  // the method that ran, once one has
  j["tier"] = tier_spec(opt.tier).name;
  j["replay_mode"] = to_string(opt.replay);
  j["coverage"] = opt.selection.coverage;
  j["top"] = opt.selection.top;
  j["nvtx_include"] = opt.nvtx_include;
  j["nvtx_ranges"] = opt.nvtx_ranges;
  j["timeout_s"] = opt.timeout_s;
  j["repeat"] = opt.repeat;
  if (opt.discovery_only) j["discovery_only"] = true;
  return j;
}

// Finds ncu (the deep pass needs it; a dry run goes on without it, saying so) and the tools of
// the discovery methods that may run. Looks only: ToolProbes asks them what they are.
Status find_tools(RunContext& run, nlohmann::ordered_json& tools) {
  TimedStep timed(run, "find tools");
  auto ncu = locate_tool(ProfilerTool::kNcu, {run.opt.ncu_path, {}, true});
  if (!ncu) {
    run.ncu_missing = ncu.error().message + "; give its path with --ncu";
    if (!run.opt.dry_run) return make_error("", 0, run.ncu_missing);
    run.ncu.ncu = "<ncu: not found>";
    return locate_discovery_tools(run, tools);
  }
  run.ncu.ncu = *ncu;
  tools["ncu"] = {{"path", *ncu}, {"version", "unknown"}};  // ToolProbes::finish says which
  return locate_discovery_tools(run, tools);
}

// ncu's version and sections and the environment (nvidia-smi, the Python interpreter): five
// short commands started together before discovery and read after it, so that their start-ups
// (about 0.8 s on the H100 machine, one after the other) overlap the program's.
class ToolProbes {
 public:
  explicit ToolProbes(const RunContext& run) : environment_(run.opt.command) {
    if (run.ncu_missing.empty()) ncu_.emplace(start_ncu_probe(run.ncu.ncu));
  }

  // Fills tools["ncu"]'s version, tools["environment"] and the sections the deep pass may ask
  // for; the step's time is what it waited for them.
  void finish(RunContext& run, nlohmann::ordered_json& tools) {
    TimedStep timed(run, "probe ncu and the environment");
    tools["environment"] = environment_.finish();
    if (!ncu_) return;
    NcuFacts facts = finish_ncu_probe(*ncu_);
    if (facts.info) tools["ncu"]["version"] = facts.info->version.text;
    // A tier's sections that this ncu does not have are left out rather than failing the run.
    if (!facts.sections) {
      run.note("warning: " + facts.sections.error().to_string() + "; the tier's sections are passed as they are");
      return;
    }
    for (const auto& section : *facts.sections) run.ncu.available_sections.push_back(section.identifier);
    for (auto wanted : tier_spec(run.opt.tier).sections) {
      if (!section_available(run.ncu, wanted)) {
        run.note(fmt::format("warning: {} has no section {}: the deep pass goes without it", run.ncu.ncu, wanted));
      }
    }
  }

 private:
  EnvironmentProbe environment_;
  std::optional<NcuProbe> ncu_;
};

// --discovery-from: the earlier run must hold a discovery this run can use. Sets the
// manifest's "discovery" from it.
Status check_discovery_from(RunContext& run) {
  const std::string& from = run.opt.discovery_from;
  if (run.opt.discovery) {
    return make_error("", 0, "--discovery-from reuses an earlier discovery: give it without --discovery");
  }
  if (!rundir::is_run_directory(from)) {
    return make_error(from, 0, "--discovery-from: not a kernlens run directory (no manifest.json)");
  }
  auto earlier = rundir::read_manifest(from);
  const std::string method = earlier ? earlier->discovery_method() : "";
  const rundir::DiscoveryLayout* layout = rundir::find_discovery_layout(method);
  if (!layout) {
    return make_error(rundir::manifest_path(from), 0, "--discovery-from: the manifest does not say which discovery ran");
  }
  if (rundir::discovery_exports(from, method).empty()) {
    return make_error(from, 0, "--discovery-from: the run has no discovery export (it failed before discovery ended)");
  }
  // ncu filtered its timing run by the NVTX ranges of that run: other ranges are not in it.
  if (!layout->records_every_launch && earlier->nvtx_include() != run.opt.nvtx_include) {
    return make_error(from, 0, fmt::format("--discovery-from: its ncu discovery kept only --nvtx-include {}; give the "
                                           "same ranges, or a run whose discovery used the tracer or nsys",
                                           nlohmann::json(earlier->nvtx_include()).dump()));
  }
  if (earlier->command != run.opt.command) {
    run.note(fmt::format("warning: --discovery-from {}: it profiled {}, not this command; its launch numbers hold "
                         "only if the program launches the same kernels",
                         from, nlohmann::json(earlier->command).dump()));
  }
  run.manifest.discovery = {{"requested", "from"},
                            {"from", std::filesystem::absolute(from).lexically_normal().string()},
                            {"from_run_id", earlier->run_id},
                            {"method", method}};
  return ok_status();
}

void print_dry_run(RunContext& run, const nlohmann::ordered_json& tools) {
  run.out << "# kernlens profile --dry-run: the commands a run would use; nothing is run\n";
  for (const auto& [name, info] : tools.items()) {
    if (name == "environment") continue;
    run.out << fmt::format("# {}: {} ({})\n", name, info["path"].get<std::string>(), info["version"].get<std::string>());
  }
  if (!run.ncu_missing.empty()) run.out << "# NOT FOUND: " << run.ncu_missing << " (shown as <ncu: not found> below)\n";
  run.out << "# environment: " << tools.value("environment", nlohmann::ordered_json::object()).dump() << "\n";
  run.out << "# run directory: " << run.dir.root.string() << "\n";
  print_discovery_plan(run);
  if (early_start_refused(run).empty()) {
    if (run.opt.early_programs == 1) {
      run.out << "# deep pass: its program starts beside discovery under ncu --mode launch and waits at its first CUDA\n"
                 "# call; the first ncu run attaches to it once discovery has chosen the kernels (--no-early-start:\n"
                 "# the program starts after discovery instead)\n";
    } else {
      run.out << fmt::format(
          "# deep pass: {0} copies of its program start beside discovery under ncu --mode launch and wait at\n"
          "# their first CUDA call; the first {0} ncu runs attach to them, one each, once discovery has chosen the\n"
          "# kernels (copies not needed are ended then; --no-early-start: the program starts after discovery)\n",
          run.opt.early_programs);
    }
  }
  run.out << "# deep pass: one ncu run per group of the kernels discovery selects (shown for the first; the\n"
             "# kernels, the launch number they share and --launch-count, one per kernel, come from discovery)\n";
  for (const auto& argv : deep_pass_plan(run)) run.out << shell_join(argv) << "\n";
}

std::string selection_summary(const Selection& s, bool of_compute) {
  return fmt::format("deep pass: {} kernels, {:.1f}% of {:.3f} ms of {}kernel time, in {} ncu runs", s.picks.size(),
                     s.total_kernel_ns > 0 ? 100 * s.covered_ns / s.total_kernel_ns : 0.0, s.total_kernel_ns * 1e-6,
                     of_compute ? "compute " : "", s.invocations.size());
}

// Says which communication kernels the deep pass leaves out; the manifest's record of them.
nlohmann::ordered_json note_communication(RunContext& run, const CommSplit& split, double total_ns) {
  constexpr std::size_t kNamesShown = 3;
  const double share = total_ns > 0 ? 100 * split.comm_ns / total_ns : 0.0;
  std::string shown;
  for (std::size_t i = 0; i < split.comm_names.size() && i < kNamesShown; ++i) {
    shown += (i ? ", " : "") + std::string(names::kernel_base_name(split.comm_names[i]));
  }
  run.note(fmt::format("communication kernels left out of the deep pass: {} kernels ({}{}), {:.1f}% of kernel time, "
                       "timed by discovery: ncu cannot replay a collective on one rank while the others do not",
                       split.comm_names.size(), shown, split.comm_names.size() > kNamesShown ? ", ..." : "", share));
  return {{"kernels", split.comm_names.size()},
          {"time_ns", split.comm_ns},
          {"names", split.comm_names},
          {"why", "communication kernels (NCCL, NVSHMEM, custom all-reduce) are not replayed alone: their time is "
                  "discovery's, and coverage is a share of compute kernel time"}};
}

// Whether this process's deep pass measures kernels: not on a rank left out of --ranks.
bool measures_kernels(const RunContext& run) { return !run.lockstep || run.lockstep->profiled(); }

// Ranks the discovery's kernels, writes discovery/kernels.csv and chooses the deep pass's
// among the compute kernels (none on a rank that is not profiled).
// `attached_runs`: how many ncu runs can attach to a program started beside discovery.
Result<Selection> select(RunContext& run, const model::Profile& timeline, std::size_t attached_runs) {
  TimedStep timed(run, "select kernels");
  auto agg = analysis::aggregate(timeline, run.classifier);
  const CommSplit split = split_communication(timeline, agg);
  Selection selection;
  std::unordered_set<std::string> chosen;
  if (measures_kernels(run)) {
    SelectionOptions options = run.opt.selection;
    options.attached_runs = attached_runs;
    auto selected = select_kernels(timeline, split.compute, options);
    if (!selected) return make_error("", 0, "selection: " + selected.error().to_string());
    selection = std::move(selected).value();
    for (const auto& pick : selection.picks) chosen.insert(timeline.names[pick.name]);
  }
  if (Status s = write_file_atomically(run.dir.kernels_csv().string(), kernels_csv(timeline, agg, chosen)); !s) {
    return s.error();
  }
  nlohmann::ordered_json communication;
  if (!split.comm_names.empty()) communication = note_communication(run, split, agg.totals.kernel_time_ns.value_or(0));
  if (!measures_kernels(run)) {
    run.note(fmt::format("rank {} is not in --ranks: its program runs untouched, in step with the profiled ranks",
                         run.lockstep->sync().me().rank));
    run.save();
    return selection;
  }
  run.note(selection_summary(selection, !split.comm_names.empty()));
  for (const auto& note : selection.notes) run.note(note);
  run.manifest.options["selection"] = {{"kernels", selection.picks.size()},
                                       {"covered_ns", selection.covered_ns},
                                       {"total_kernel_ns", selection.total_kernel_ns},
                                       {"ncu_runs", selection.invocations.size()},
                                       {"kernel_name_base", to_string(selection.name_base)}};
  if (!communication.empty()) run.manifest.options["selection"]["communication_excluded"] = communication;
  run.save();
  return selection;
}

// The wall time of discovery's program runs (the tracer's, nsys's or ncu's run).
std::int64_t discovery_wall_ns(const rundir::Manifest& manifest) {
  std::int64_t ns = 0;
  for (const auto& r : manifest.runs) {
    if (r.step.starts_with("discovery (")) ns += r.wall_ns;
  }
  return ns;
}

void fill_manifest(RunContext& run, const std::string& run_id, const nlohmann::ordered_json& tools) {
  const ProfileRunOptions& opt = run.opt;
  run.manifest.run_id = run_id;
  run.manifest.command = opt.command;
  run.manifest.cwd = std::filesystem::current_path().string();
  run.manifest.env = rundir::env_subset(environ);
  run.manifest.tools = tools;
  run.manifest.clock_control = std::string(to_string(opt.clock_control));
  run.manifest.options = options_json(opt);
  run.manifest.tags = opt.tags;
  if (run.lockstep) {
    const LauncherInfo& me = run.lockstep->sync().me();
    run.manifest.run_id = fmt::format("{}-{}", run_id, rank_name(me.rank));
    run.manifest.options["rank"] = {{"rank", me.rank},
                                    {"world_size", me.world_size},
                                    {"launcher", me.launcher},
                                    {"profiled", run.lockstep->profiled()},
                                    {"job_run_id", run_id}};
  }
  if (run.manifest.discovery.empty()) {
    run.manifest.discovery = {{"requested", discovery_name(opt.discovery)}};
  }
}

// After discovery: select, measure, join, analyze, write. The exit code.
ProfileRunResult measure_and_analyze(RunContext& run, model::Profile& timeline, EarlyPrograms& early) {
  if (!timeline.devices.empty()) run.manifest.tools["gpu"] = timeline.devices[0].name;
  if (std::string why = early_program_unusable(timeline); !early.empty() && !why.empty()) {
    run.note("the deep pass's programs, started early, are not used: " + why);
    drop_early_programs(run, early, why);
  }
  auto selection = select(run, timeline, early.size());
  if (!selection) {
    drop_early_programs(run, early, "selection failed");
    return run.finish(kExitToolFailed, "failed", selection.error().to_string());
  }
  // What the selection does not need leaves now, with the memory and CPU it holds.
  drop_early_programs(run, early,
                      selection->invocations.empty() ? "no kernel to measure"
                                                     : fmt::format("the deep pass needs {} ncu run(s)",
                                                                   selection->invocations.size()),
                      selection->invocations.size());
  if (run.stop_requested()) {
    drop_early_programs(run, early, "interrupted");
    return run.finish_interrupted("selecting the kernels");
  }
  if (run.lockstep && !run.opt.discovery_only) {
    TimedStep timed(run, "agree with the other ranks");
    auto plan = run.lockstep->agree(*selection, discovery_wall_ns(run.manifest));
    if (!plan) return run.finish(kExitToolFailed, "failed", plan.error().to_string());
    if (plan->runs > selection->invocations.size()) {
      run.note(fmt::format("deep pass: {} program runs in step with the other ranks, {} of them under ncu, the others "
                           "untouched",
                           plan->runs, selection->invocations.size()));
    }
  }
  DeepPassResult deep = run.opt.discovery_only ? DeepPassResult{} : deep_pass(run, *selection, early);
  if (run.stop_requested()) {
    return deep.why.empty() ? run.finish_interrupted("running the deep pass")
                            : run.finish(kExitToolFailed, "interrupted", deep.why);
  }
  {
    TimedStep timed(run, "join the deep pass");
    for (const auto& warning : load::join_deep_exports(deep.csvs, timeline, load::analysis_read_options())) {
      run.note("warning: " + warning);
    }
  }
  if (run.stop_requested()) return run.finish_interrupted("reading the deep pass's exports");
  Result<analysis::Analysis> analysis = [&] {
    TimedStep timed(run, "analyze");
    return analysis::analyze(timeline, run.classifier, run.opt.analysis);
  }();
  if (!analysis) return run.finish(kExitBadInput, "failed", analysis.error().to_string());
  if (const auto& write = run.opt.writers.analysis_json) {
    TimedStep timed(run, "write analysis.json");
    if (Status s = write_file_atomically(run.dir.analysis().string(), write(timeline, *analysis)); !s) {
      return run.finish(kExitBadInput, "failed", s.error().to_string());
    }
  }
  if (run.stop_requested()) return run.finish_interrupted("writing the analysis");
  // A rank that is not profiled keeps its kernel times in analysis.json; the report is the
  // profiled ranks'.
  if (run.opt.writers.summary && measures_kernels(run)) run.out << run.opt.writers.summary(timeline, *analysis);
  if (!deep.why.empty()) return run.finish(kExitToolFailed, "failed", deep.why);
  return run.finish(kExitOk, "complete", "");
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

Result<DiscoveryRequest> parse_discovery(std::string_view name) {
  if (name == "auto") return DiscoveryRequest();
  if (const rundir::DiscoveryLayout* layout = rundir::find_discovery_layout(name)) return DiscoveryRequest(layout->method);
  std::vector<std::string_view> names = {"auto"};
  for (const auto& layout : rundir::discovery_layouts()) names.push_back(layout.name);
  return make_error("", 0, fmt::format("unknown discovery '{}': expected {}", name, fmt::join(names, ", ")));
}

std::string_view discovery_name(DiscoveryRequest request) {
  return request ? rundir::discovery_layout(*request).name : std::string_view("auto");
}

Result<std::string> nvtx_include_expression(std::string_view user_path) {
  load::NvtxPath path = load::parse_nvtx_path(user_path, true);
  for (const auto& name : path.ranges) {
    if (name.empty()) return make_error("", 0, fmt::format("--nvtx-include '{}': an empty range name", user_path));
  }
  return nvtx_push_pop_filter(path.domain, path.ranges);
}

Result<std::string> nvtx_range_expression(std::string_view user_range) {
  load::NvtxPath path = load::parse_nvtx_path(user_range, false);
  if (path.ranges[0].empty()) return make_error("", 0, fmt::format("--nvtx-range '{}': an empty range name", user_range));
  return nvtx_start_end_filter(path.domain, path.ranges);
}

ProfileRunResult run_profile(const ProfileRunOptions& opt, const names::KernelClassifier& classifier,
                             std::ostream& out, std::ostream& err) {
  RunContext run(opt, classifier, out, err);
  auto usage_error = [&](const Error& e) {
    err << "kernlens: error: " << e.to_string() << "\n";
    return ProfileRunResult{kExitBadInput, {}};
  };
  auto filters = nvtx_filters(opt);
  if (!filters) return usage_error(filters.error());
  run.ncu.clock_control = opt.clock_control;
  run.ncu.nvtx_include = *filters;
  // Application replay runs the program once per pass: ending it early would cut passes short.
  run.ncu.kill_after_last = opt.kill_after_last && opt.replay == ReplayMode::kKernel;
  nlohmann::ordered_json tools = nlohmann::ordered_json::object();
  if (Status s = find_tools(run, tools); !s) return usage_error(s.error());
  ToolProbes probes(run);
  tools["environment"] = nlohmann::ordered_json::object();  // its place; ToolProbes::finish fills it
  const std::string run_id = opt.run_id.empty() ? rundir::make_run_id(std::chrono::system_clock::now(), opt.command[0]) : opt.run_id;
  const std::filesystem::path root = std::filesystem::path(opt.out) / run_id;
  run.dir = rundir::RunDir{run_id, root, root / "discovery", root / "deep"};
  if (opt.dry_run) {
    probes.finish(run, tools);
    print_dry_run(run, tools);
    return {kExitOk, {}};
  }
  if (!opt.discovery_from.empty()) {
    if (Status s = check_discovery_from(run); !s) return usage_error(s.error());
  }
  auto launcher = launcher_info(environ);
  if (!launcher) return usage_error(launcher.error());
  std::optional<Lockstep> lockstep;
  std::string job_run_id = run_id;
  if (*launcher && (*launcher)->world_size > 1) {
    if (!opt.discovery_from.empty()) {
      return usage_error(Error{"", 0, "--discovery-from is not supported under a launcher yet: run without it"});
    }
    if (Status s = check_ranks(opt, **launcher); !s) return usage_error(s.error());
    auto ranked = open_ranked_run(opt, **launcher, run_id, [&run] { return run.stop_requested(); });
    if (!ranked) {
      err << "kernlens: error: rank " << (*launcher)->rank << ": " << ranked.error().to_string() << "\n";
      return {kExitToolFailed, {}};
    }
    run.dir = ranked->dir;
    lockstep = std::move(ranked->lockstep);
    run.lockstep = &*lockstep;
    job_run_id = lockstep->sync().run_id();
  } else {
    if (!opt.ranks.empty()) run.note("warning: --ranks: no launcher's rank variables (RANK and WORLD_SIZE, ...): "
                                     "profiling this process alone");
    auto dir = rundir::create_run_dir(opt.out, run_id, opt.force_overwrite);
    if (!dir) return usage_error(dir.error());
    run.dir = *dir;
  }
  InterruptGuard guard;
  run.guard = &guard;
  fill_manifest(run, job_run_id, tools);
  run.save();

  EarlyPrograms early = start_early_programs(run);
  model::Profile timeline;
  const std::string why = discover(run, timeline);
  // Probes still running after a Ctrl-C are ended with `probes`; their fields stay "unknown".
  if (!run.stop_requested()) probes.finish(run, run.manifest.tools);
  if (!why.empty()) {
    drop_early_programs(run, early, "discovery failed");
    return run.finish(kExitToolFailed, "failed", why);
  }
  if (run.stop_requested()) {
    drop_early_programs(run, early, "interrupted");
    return run.finish_interrupted("reading the discovery");
  }
  return measure_and_analyze(run, timeline, early);
}

}  // namespace kernlens::profile
