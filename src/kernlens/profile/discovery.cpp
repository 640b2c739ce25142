#include "kernlens/profile/discovery.h"

#include <array>
#include <filesystem>
#include <fstream>
#include <ostream>

#include <fmt/format.h>

#include "kernlens/common/file.h"
#include "kernlens/common/shell.h"
#include "kernlens/load/timeline.h"
#include "kernlens/profile/tools.h"
#include "kernlens/rundir/layout.h"

namespace kernlens::profile {
namespace fs = std::filesystem;
namespace {

using rundir::DiscoveryLayout;
using rundir::DiscoveryMethod;

// How one method's try went.
struct Attempt {
  std::string why;              // empty: it worked
  bool profiler_fault = false;  // the profiler failed, not the program: the next method may work
  std::vector<std::string> inputs;  // the timeline's files, when it worked
};

// A child that a signal ended while nobody asked it to stop: a crash, which a profiler may
// cause as well as the program.
bool crashed(const ProcessResult& r) { return r.term_signal && !r.interrupted && !r.timed_out; }

// The lines of a log that tell what went wrong ("Importer error status: ...", "ERROR ..."), the
// first few, to quote.
std::vector<std::string> error_lines(const fs::path& log) {
  std::vector<std::string> lines;
  std::ifstream in(log);
  for (std::string line; lines.size() < 3 && std::getline(in, line);) {
    if (line.find("rror") != std::string::npos || line.find("skipping") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

std::string quoted(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += "\n    " + line;
  return text;
}

// --- tracer ---------------------------------------------------------------------------------

const DiscoveryLayout& tracer_layout() { return rundir::discovery_layout(DiscoveryMethod::kTracer); }

std::optional<Error> locate_tracer_library(RunContext& run, nlohmann::ordered_json& tools) {
  auto tracer = locate_tracer(run.opt.tracer_path, executable_dir());
  if (!tracer) return make_error("", 0, "--discovery tracer: " + tracer.error().message);
  run.tracer = *tracer;
  tools["tracer"] = {{"path", tracer->library}, {"version", KERNLENS_VERSION}};
  return std::nullopt;
}

std::string tracer_missing(const RunContext& run) {
  return run.tracer.library.empty() ? fmt::format("{} not found beside kernlens (give it with --tracer)",
                                                  kTracerLibraryName)
                                    : std::string();
}

std::vector<std::vector<std::string>> tracer_commands(const RunContext& run) {
  std::vector<std::string> argv = {"env"};
  for (const auto& variable : tracer_environment(run.tracer, run.dir.discovery.string())) argv.push_back(variable);
  argv.insert(argv.end(), run.opt.command.begin(), run.opt.command.end());
  return {argv};
}

// The program under the tracer: every process it starts writes discovery/kernlens-<pid>.kltrace.
Attempt run_tracer(RunContext& run) {
  const std::string step = "discovery (tracer)";
  StepSpec spec(step, run.opt.command, run.dir.discovery, "tracer");
  spec.echo = run.opt.echo_program_output;
  spec.env = tracer_environment(run.tracer, run.dir.discovery.string());
  auto prof = run_step(run, spec);
  if (!prof) return {prof.error().to_string(), false, {}};
  if (auto why = failure(step + ": the program under the kernlens tracer", *prof); !why.empty()) {
    return {why, crashed(prof->result), {}};
  }
  Attempt a;
  a.inputs = rundir::discovery_exports_in(run.dir.discovery, tracer_layout());
  if (a.inputs.empty()) {
    a.why = fmt::format("{}: the tracer wrote no {}*{} (the program used no CUDA, or CUDA did not load the tracer: "
                        "see discovery/tracer.stderr.log)",
                        step, tracer_layout().export_prefix, tracer_layout().export_suffix);
    a.profiler_fault = true;
  }
  return a;
}

// --- nsys -----------------------------------------------------------------------------------

const DiscoveryLayout& nsys_layout() { return rundir::discovery_layout(DiscoveryMethod::kNsys); }
// discovery/timeline: the base of nsys's report, timeline.nsys-rep.
fs::path nsys_report_base(const RunContext& run) { return run.dir.discovery / nsys_layout().report_stem; }
fs::path nsys_report(const RunContext& run) { return nsys_report_base(run).string() + ".nsys-rep"; }
fs::path nsys_export(const RunContext& run) { return run.dir.discovery / nsys_layout().export_file(); }

// nsys's version is asked for only when it runs (`auto` seldom gets to it).
std::optional<Error> locate_nsys(RunContext& run, nlohmann::ordered_json&) {
  auto nsys = locate_tool(ProfilerTool::kNsys, {run.opt.nsys_path, {}, true});
  if (!nsys) return make_error("", 0, nsys.error().message + "; give its path with --nsys, or use --discovery tracer or ncu");
  run.nsys = *nsys;
  return std::nullopt;
}

std::string nsys_missing(const RunContext& run) {
  return run.nsys.empty() ? "nsys not found (give it with --nsys)" : std::string();
}

std::vector<std::string> nsys_profile_argv(const RunContext& run) {
  std::vector<std::string> argv = {run.nsys, "profile", "--trace=cuda,nvtx", "--sample=none", "--cpuctxsw=none",
                                   "--force-overwrite=true", "-o", nsys_report_base(run).string()};
  argv.insert(argv.end(), run.opt.command.begin(), run.opt.command.end());
  return argv;
}

std::vector<std::string> nsys_export_argv(const RunContext& run) {
  return {run.nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o",
          nsys_export(run).string(), nsys_report(run).string()};
}

std::vector<std::vector<std::string>> nsys_commands(const RunContext& run) {
  return {nsys_profile_argv(run), nsys_export_argv(run)};
}

// An nsys that cannot turn its capture into a report ("Importer error status ... skipping
// importation of the QDSTRM file", seen on the H100 machine) writes no .nsys-rep, and its
// export then fails: a fault of the profiler, not of the program.
Attempt run_nsys(RunContext& run) {
  if (!run.manifest.tools.contains("nsys")) {
    auto info = probe_tool(run.nsys);
    run.manifest.tools["nsys"] = {{"path", run.nsys}, {"version", info ? info->version.text : "unknown"}};
  }
  const fs::path report = nsys_report(run);
  StepSpec spec("discovery (nsys)", nsys_profile_argv(run), run.dir.discovery, "nsys");
  spec.echo = run.opt.echo_program_output;
  auto prof = run_step(run, spec);
  if (!prof) return {prof.error().to_string(), false, {}};
  const auto said = error_lines(run.dir.discovery / "nsys.stderr.log");
  const auto said_out = error_lines(run.dir.discovery / "nsys.stdout.log");
  std::vector<std::string> nsys_said = said;
  nsys_said.insert(nsys_said.end(), said_out.begin(), said_out.end());
  if (auto why = failure("discovery (nsys profile)", *prof); !why.empty()) {
    const bool stopped = prof->result.interrupted || prof->result.timed_out;
    return {why + quoted(nsys_said), !stopped && (!is_regular_file_at(report) || crashed(prof->result)), {}};
  }
  if (!is_regular_file_at(report)) {
    return {fmt::format("discovery (nsys profile): nsys wrote no report (discovery/{})", report.filename().string()) +
                quoted(nsys_said),
            true,
            {}};
  }
  StepSpec export_spec("discovery export (nsys)", nsys_export_argv(run), run.dir.discovery, "nsys_export");
  auto exp = run_step(run, export_spec);
  if (!exp) return {exp.error().to_string(), true, {}};
  if (auto why = failure("discovery export (nsys export)", *exp); !why.empty()) {
    const bool stopped = exp->result.interrupted || exp->result.timed_out;
    return {why + quoted(error_lines(run.dir.discovery / "nsys_export.stderr.log")), !stopped, {}};
  }
  return {{}, false, {nsys_export(run).string()}};
}

// --- ncu timing mode ------------------------------------------------------------------------

const DiscoveryLayout& ncu_layout() { return rundir::discovery_layout(DiscoveryMethod::kNcu); }
// discovery/timing: the base of ncu's report, timing.ncu-rep.
fs::path ncu_report_base(const RunContext& run) { return run.dir.discovery / ncu_layout().report_stem; }
fs::path ncu_report(const RunContext& run) { return ncu_report_base(run).string() + ".ncu-rep"; }

// ncu is found before discovery: the deep pass needs it whatever discovery runs.
std::optional<Error> locate_ncu(RunContext&, nlohmann::ordered_json&) { return std::nullopt; }

std::string ncu_missing(const RunContext& run) { return run.ncu_missing; }

std::vector<std::vector<std::string>> ncu_commands(const RunContext& run) {
  return {discovery_argv(run.ncu, ncu_report_base(run).string(), run.opt.command),
          export_argvs(run.ncu.ncu, ncu_report(run).string())[0]};
}

Attempt run_ncu_timing(RunContext& run) {
  const std::string step = "discovery (ncu)";
  std::uint64_t timed = 0;
  auto on_event = [&](const NcuEvent& e) {
    if (e.kind != NcuEventKind::kProfiling || !e.passes) return;
    ++timed;
    if (run.opt.progress_tty) {
      run.err << fmt::format("\rkernlens: discovery: {} launches timed, {}", timed, format_elapsed(run.elapsed_s()))
              << std::flush;
    }
  };
  StepSpec spec(step, ncu_commands(run)[0], run.dir.discovery, "ncu_timing");
  spec.echo = run.opt.echo_program_output;
  spec.on_event = on_event;
  auto prof = run_step(run, spec);
  if (run.opt.progress_tty) run.err << "\n";
  if (!prof) return {prof.error().to_string(), false, {}};
  if (auto why = failure(step + ": ncu in timing mode", *prof); !why.empty()) return {why, false, {}};
  if (prof->no_kernels_profiled || !is_regular_file_at(ncu_report(run))) {
    return {ncu_profiled_nothing(step, *prof,
                                 {"the --nvtx-include/--nvtx-range filter matches no range the program opens (names "
                                  "and domains must match exactly; `--discovery tracer` or nsys shows every range)",
                                  "the program ended before it launched a kernel"}),
            false,
            {}};
  }
  const std::string input = (run.dir.discovery / ncu_layout().export_file()).string();
  StepSpec export_spec("discovery export (ncu)", ncu_commands(run)[1], run.dir.discovery, "timing_export");
  export_spec.stdout_file = input;
  auto exp = run_step(run, export_spec);
  if (!exp) return {exp.error().to_string(), false, {}};
  if (auto why = failure("discovery export (ncu)", *exp); !why.empty()) return {why, false, {}};
  return {{}, false, {input}};
}

// --- the table ------------------------------------------------------------------------------

// One discovery method: its files and stage filter (the run directory's side, shared with the
// reader), how its tool is found, its commands and its run.
struct Backend {
  const DiscoveryLayout& layout;  // name, outputs, whether --nvtx-include applies on reading
  std::string_view what;          // in words
  // Finds its tool for a run that may use it. The error, when it is missing, is a usage error
  // for a run that asked for this method by name.
  std::optional<Error> (*locate)(RunContext&, nlohmann::ordered_json& tools);
  std::string (*missing)(const RunContext&);  // why its tool is not there; empty when it is
  std::vector<std::vector<std::string>> (*commands)(const RunContext&);  // for --dry-run
  Attempt (*run)(RunContext&);
};

// In the order `auto` tries them (rundir's layouts are in that order).
const std::array<Backend, 3>& backends() {
  static const std::array<Backend, 3> kBackends = {{
      {tracer_layout(), "the kernlens tracer", locate_tracer_library, tracer_missing, tracer_commands, run_tracer},
      {nsys_layout(), "Nsight Systems", locate_nsys, nsys_missing, nsys_commands, run_nsys},
      {ncu_layout(), "ncu in timing mode", locate_ncu, ncu_missing, ncu_commands, run_ncu_timing},
  }};
  return kBackends;
}

std::vector<const Backend*> backends_to_try(DiscoveryRequest requested) {
  std::vector<const Backend*> order;
  for (const auto& b : backends()) {
    if (!requested || b.layout.method == *requested) order.push_back(&b);
  }
  return order;
}

nlohmann::ordered_json attempt_json(const Backend& m, std::string_view outcome, const std::string& why) {
  nlohmann::ordered_json j = {{"method", m.layout.name}, {"outcome", outcome}};
  if (!why.empty()) j["why"] = why;
  return j;
}

// Reads a method's files into `timeline`. Returns why it could not.
std::string read_timeline(RunContext& run, const std::vector<std::string>& inputs, bool filter_stages,
                          model::Profile& timeline) {
  TimedStep timed(run, "read discovery");
  Status s = load::read_discovery(inputs, run.opt.nvtx_include, filter_stages, timeline, load::analysis_read_options());
  return s ? std::string() : s.error().to_string();
}

void settle(RunContext& run, const Backend& m) {
  run.discovery = m.layout.method;
  run.manifest.discovery["method"] = m.layout.name;
  run.manifest.options["discovery"] = m.layout.name;
}

// --- --discovery-from -----------------------------------------------------------------------

// Links (or copies, across file systems) the earlier run's discovery into this run directory,
// so that the new one is whole on its own.
Status bring_file(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_hard_link(from, to, ec);
  if (!ec) return ok_status();
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return make_error(from.string(), 0, "cannot copy the earlier discovery: " + ec.message());
  return ok_status();
}

std::string reuse_discovery(RunContext& run, model::Profile& timeline) {
  const std::string& from = run.opt.discovery_from;
  const std::string earlier = run.manifest.discovery.value("method", "");
  std::vector<std::string> inputs;
  for (const auto& file : rundir::discovery_exports(from, earlier)) {
    const fs::path target = run.dir.discovery / fs::path(file).filename();
    if (Status s = bring_file(file, target); !s) return s.error().to_string();
    inputs.push_back(target.string());
  }
  if (inputs.empty()) return fmt::format("--discovery-from {}: no discovery export there", from);
  run.manifest.options["discovery"] = earlier;
  const DiscoveryLayout& layout = *rundir::find_discovery_layout(earlier);  // check_discovery_from checked it
  run.discovery = layout.method;
  run.save();
  return read_timeline(run, inputs, layout.records_every_launch, timeline);
}

}  // namespace

Status locate_discovery_tools(RunContext& run, nlohmann::ordered_json& tools) {
  if (!run.opt.discovery_from.empty()) return ok_status();
  const auto order = backends_to_try(run.opt.discovery);
  for (const Backend* b : order) {
    if (auto missing = b->locate(run, tools); missing && run.opt.discovery) return *missing;
  }
  for (const Backend* b : order) {
    if (b->missing(run).empty()) {
      run.discovery = b->layout.method;
      break;
    }
  }
  return ok_status();
}

std::string discover(RunContext& run, model::Profile& timeline) {
  if (!run.opt.discovery_from.empty()) return reuse_discovery(run, timeline);
  auto& attempts = run.manifest.discovery["attempts"] = nlohmann::ordered_json::array();
  const auto order = backends_to_try(run.opt.discovery);
  std::string last_why;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Backend& m = *order[i];
    if (run.stop_requested()) break;
    if (auto missing = m.missing(run); !missing.empty()) {
      attempts.push_back(attempt_json(m, "not found", missing));
      continue;
    }
    Attempt a = m.run(run);
    model::Profile read;
    if (a.why.empty()) {
      a.why = read_timeline(run, a.inputs, m.layout.records_every_launch, read);
      a.profiler_fault = !a.why.empty();
    }
    if (a.why.empty()) {
      attempts.push_back(attempt_json(m, "ran", ""));
      for (std::size_t rest = i + 1; rest < order.size(); ++rest) {
        attempts.push_back(attempt_json(*order[rest], "not tried", fmt::format("{} worked", m.layout.name)));
      }
      settle(run, m);
      run.save();
      timeline = std::move(read);
      return {};
    }
    attempts.push_back(attempt_json(m, "failed", a.why));
    last_why = a.why;
    const bool more = i + 1 < order.size();
    if (more && (!a.profiler_fault || run.stop_requested())) {
      const std::string why_not = run.stop_requested() ? "interrupted"
                                                       : fmt::format("the program itself failed under {}: another "
                                                                     "profiler would not help",
                                                                     m.layout.name);
      for (std::size_t rest = i + 1; rest < order.size(); ++rest) {
        attempts.push_back(attempt_json(*order[rest], "not tried", why_not));
      }
    }
    run.save();
    if (!a.profiler_fault || run.stop_requested() || !more) break;
    run.note(fmt::format("warning: discovery with {} failed ({}); trying the next method", m.what, a.why));
  }
  if (last_why.empty()) {
    last_why = run.stop_requested() ? "interrupted before discovery ran"
                                    : "discovery: no method could run (" + attempts.dump() + ")";
  }
  return last_why;
}

void print_discovery_plan(RunContext& run) {
  const auto order = backends_to_try(run.opt.discovery);
  if (!run.opt.discovery_from.empty()) {
    run.out << "# discovery: reused from " << run.opt.discovery_from << " (its exports are linked into "
            << run.dir.discovery.string() << ")\n";
    return;
  }
  const Backend* first = nullptr;
  std::string plan;
  for (const Backend* m : order) {
    const std::string missing = m->missing(run);
    plan += fmt::format("{}{} ({})", plan.empty() ? "" : ", then ", m->layout.name,
                        missing.empty() ? "found" : "NOT FOUND: " + missing);
    if (!first && missing.empty()) first = m;
  }
  run.out << "# discovery: " << plan << "\n";
  if (!first) {
    run.out << "# (no discovery method can run here: every command below is shown as it would be)\n";
    first = order.front();
  }
  for (const auto& argv : first->commands(run)) run.out << shell_join(argv) << "\n";
}

}  // namespace kernlens::profile
