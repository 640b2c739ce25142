// kernlens profile [--discovery auto|nsys|tracer|ncu] [--discovery-from RUN_DIR] [--top N]
//                  [--coverage F] [--tier T] [--nvtx-include PATH]... [--nvtx-range NAME]...
//                  [--clock-control none|base] [-o|--output DIR] [-f] [--run-id ID]
//                  [--tag KEY=VALUE]... [--timeout SEC] [--repeat N] [--discovery-only]
//                  [--ranks LIST|all] [--deep-timeout SEC]
//                  [--dry-run] [--verbose]
//                  -- CMD ARG...
#include <unistd.h>

#include <charconv>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "kernlens/cli/commands.h"
#include "kernlens/profile/interrupt.h"
#include "kernlens/profile/profile_run.h"
#include "kernlens/report/json_report.h"
#include "kernlens/report/text_report.h"
#include "kernlens/rundir/layout.h"
#include "kernlens/rundir/tags.h"

extern char** environ;

namespace kernlens::cli {
namespace {

struct ProfileCliOptions {
  profile::ProfileRunOptions run;
  std::string discovery = "auto", tier = "roofline", clock_control = "none", replay = "kernel";
  std::vector<std::string> ranks;
  bool quiet = false, no_kill = false, no_early_start = false;
  std::vector<std::string> rule_files, tags;
};

// --ranks: "all" (or nothing) is every rank; else a list of rank numbers.
std::optional<Error> parse_ranks(const std::vector<std::string>& texts, std::vector<int>& ranks) {
  for (const auto& text : texts) {
    if (text == "all") {
      ranks.clear();
      return std::nullopt;
    }
    int rank = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), rank);
    if (ec != std::errc() || end != text.data() + text.size() || rank < 0) {
      return Error{"", 0, fmt::format("--ranks '{}': expected rank numbers (0,1) or all", text)};
    }
    ranks.push_back(rank);
  }
  return std::nullopt;
}

int run_profile_command(ProfileCliOptions& opt) {
  if (auto e = parse_ranks(opt.ranks, opt.run.ranks)) return bad_input(*e);
  auto discovery = profile::parse_discovery(opt.discovery);
  auto tier = profile::parse_tier(opt.tier);
  auto clocks = profile::parse_clock_control(opt.clock_control);
  for (const Error* e : {discovery ? nullptr : &discovery.error(), tier ? nullptr : &tier.error(),
                         clocks ? nullptr : &clocks.error()}) {
    if (e) return bad_input(*e);
  }
  auto tags = rundir::parse_tags(opt.tags);
  if (!tags) return bad_input(tags.error());
  opt.run.tags = std::move(tags).value();
  opt.run.discovery = *discovery;
  opt.run.tier = *tier;
  opt.run.clock_control = *clocks;
  opt.run.replay = opt.replay == "application" ? profile::ReplayMode::kApplication : profile::ReplayMode::kKernel;
  opt.run.progress_tty = isatty(STDERR_FILENO) == 1;
  opt.run.echo_program_output = !opt.quiet;
  opt.run.kill_after_last = !opt.no_kill && !profile::launcher_rank(environ);
  if (opt.no_early_start) opt.run.early_programs = 0;
  // The run directory's analysis.json and the tables printed at the end.
  opt.run.writers.analysis_json = [](const model::Profile& p, const analysis::Analysis& a) {
    return report::analysis_json(p, a, {});
  };
  opt.run.writers.summary = [](const model::Profile& p, const analysis::Analysis& a) {
    return report::analysis_text(p, a, report::TextOptions{20, 100});
  };
  std::optional<names::KernelClassifier> classifier = load_classifier(opt.rule_files);
  if (!classifier) return kExitBadInput;
  return profile::run_profile(opt.run, *classifier, std::cout, std::cerr).exit_code;
}

}  // namespace

Command add_profile_command(CLI::App& app) {
  auto opt = std::make_shared<ProfileCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "profile",
      "Run a program under the profilers: time every kernel, then measure the few that make up\n"
      "most of the GPU time with Nsight Compute, into a run directory with the analysis.");
  cmd->footer(
      "Discovery times every kernel launch. --discovery auto tries the kernlens CUPTI tracer\n"
      "(libkernlens_tracer.so beside kernlens), then Nsight Systems, then ncu in timing mode (one\n"
      "metric, no cache flushes), skipping what is not installed and falling back, with a warning,\n"
      "when a profiler fails; the manifest says which one ran and why the others did not. Then the\n"
      "fewest kernels that reach --coverage of kernel time (at most --top) are measured, one\n"
      "representative launch each, in as few ncu runs as possible, and ncu ends the program after\n"
      "the last one. Clocks are left alone unless --clock-control base.\n"
      "The run directory: OUTPUT/RUN_ID/{manifest.json, discovery/, deep/, analysis.json}.\n"
      "--repeat N sets KERNLENS_REPEAT=N for the program, which runs its measured region N times\n"
      "(llm_stages.py takes it as its --repeat); a top-level NVTX range that ran N times marks the\n"
      "repetitions, each a sample for `kernlens compare` (median, interval). ncu discovery has no\n"
      "timeline to find them on: use the tracer or nsys.\n"
      "Everything after -- is the program's, verbatim; kernlens's options go before it.\n"
      "Examples:\n"
      "  kernlens profile --nvtx-include prefill -o runs -- python3 examples/workloads/llm_stages.py --model llama\n"
      "  kernlens profile --nvtx-include \"LLM@prefill/\" --tier occupancy -- python3 run.py\n"
      "  kernlens profile --discovery-from runs/RUN_ID --tier detailed -o runs -- python3 run.py\n"
      "  kernlens profile --dry-run -- ./app          (print the commands; run nothing)\n"
      "  torchrun --nproc-per-node 2 --no-python kernlens profile --ranks 0 -- python3 train.py\n"
      "  mpirun -np 2 kernlens profile --ranks all -- ./app\n"
      "Under a launcher (torchrun needs --no-python: kernlens is not a Python script), every rank runs\n"
      "kernlens: all of them run discovery, the ranks of --ranks (default: all) run the deep pass, and\n"
      "every rank runs its program the same number of times, in step, so that collectives complete.\n"
      "One run directory OUTPUT/RUN_ID/ holds rank-N/ per rank and a manifest of which rank ran what.\n"
      "Communication kernels (NCCL, NVSHMEM) are never replayed alone: the deep pass leaves them out\n"
      "(their time is discovery's) and its coverage is a share of compute kernel time.");
  cmd->positionals_at_end();  // the first word of CMD ends kernlens's options, as with ncu and nsys
  cmd->add_option("CMD", opt->run.command, "The program to profile and its arguments (after --)")
      ->required()
      ->expected(1, -1);
  std::vector<std::string> methods;
  for (const auto& layout : rundir::discovery_layouts()) methods.emplace_back(layout.name);
  std::vector<std::string> choices = {"auto"};
  choices.insert(choices.end(), methods.begin(), methods.end());
  cmd->add_option("--discovery", opt->discovery,
                  fmt::format("How to time every kernel: auto ({}), {}", fmt::join(methods, ", then "),
                              fmt::join(methods, ", ")))
      ->check(CLI::IsMember(choices))
      ->capture_default_str();
  cmd->add_option("--discovery-from", opt->run.discovery_from,
                  "Reuse the discovery of an earlier run directory of the same program instead of running one")
      ->type_name("RUN_DIR");
  cmd->add_option("--top", opt->run.selection.top, "Measure at most N kernels")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--coverage", opt->run.selection.coverage, "Measure the kernels that make up this share of kernel time")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--tier", opt->tier, "Nsight Compute sections: quick, memory, occupancy, roofline, detailed, full")
      ->check(CLI::IsMember({"quick", "memory", "occupancy", "roofline", "detailed", "full"}))
      ->capture_default_str();
  cmd->add_option("--nvtx-include", opt->run.nvtx_include,
                  "Only kernels inside these NVTX push/pop ranges: [DOMAIN@]RANGE[/RANGE...]; ncu's own spelling "
                  "with a trailing / (\"LLM@prefill/\") works too; '\\' before a literal @ or /; repeat for more")
      ->type_name("PATH");
  cmd->add_option("--nvtx-range", opt->run.nvtx_ranges, "Only kernels inside this NVTX start/end range: [DOMAIN@]NAME")
      ->type_name("NAME");
  cmd->add_option("--clock-control", opt->clock_control, "Passed to ncu: none keeps the GPU's own clocks")
      ->check(CLI::IsMember({"none", "base"}))
      ->capture_default_str();
  cmd->add_option("--replay-mode", opt->replay, "ncu replay mode of the deep pass")
      ->check(CLI::IsMember({"kernel", "application"}))
      ->capture_default_str();
  cmd->add_option("-o,--output,--out", opt->run.out, "Where run directories go (OUTPUT/RUN_ID/)")
      ->type_name("DIR")
      ->capture_default_str();
  cmd->add_flag("-f,--force-overwrite", opt->run.force_overwrite,
                "Replace a run directory of the same --run-id (only a kernlens run directory is ever replaced)");
  cmd->add_option("--run-id", opt->run.run_id, "Name of the run directory (default: UTC time and program)");
  cmd->add_option("--tag", opt->tags,
                  "KEY=VALUE kept in manifest.json (\"tags\"); `kernlens db ingest` takes them; repeat for more")
      ->type_name("KEY=VALUE");
  cmd->add_option("--timeout", opt->run.timeout_s, "Stop a profiler run after SEC seconds (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--repeat", opt->run.repeat,
                  "Run the program's measured region N times in discovery (KERNLENS_REPEAT=N): samples for compare")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--discovery-only", opt->run.discovery_only,
                "Skip the deep pass: time every kernel and analyze that (enough for compare)");
  cmd->add_option("--ranks", opt->ranks,
                  "Under torchrun/mpirun/srun: the ranks whose kernels the deep pass measures, or all (the "
                  "default); the others run their program untouched, in step")
      ->delimiter(',')
      ->type_name("LIST|all");
  cmd->add_option("--deep-timeout", opt->run.deep_timeout_s,
                  "Under a launcher: stop a deep-pass run (and waiting for another rank) after SEC seconds "
                  "(0: max(60 s, 5x the slowest rank's discovery) + 10 s per kernel the run profiles); a rank "
                  "whose partner stopped or died stops at once, exit 3")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--ncu", opt->run.ncu_path, "Path of ncu (default: searched for)");
  cmd->add_option("--nsys", opt->run.nsys_path, "Path of nsys (default: searched for)");
  cmd->add_option("--tracer", opt->run.tracer_path,
                  "Path of libkernlens_tracer.so (default: beside kernlens, then ../lib)");
  cmd->add_flag("--dry-run", opt->run.dry_run,
                "Print the tools found (and what is missing) and every command a run would use; run nothing");
  cmd->add_flag("--no-kill", opt->no_kill,
                "Let the program run to its end after the deep pass profiled its last kernel (by default "
                "ncu ends it there; never under a launcher)");
  cmd->add_option("--early-programs", opt->run.early_programs,
                  "How many copies of the program start beside discovery under `ncu --mode launch`, each waiting at "
                  "its first CUDA call for a deep-pass run to attach to it once the kernels are chosen: the "
                  "program's start-up is paid once, and kernels that share no launch number cost a second attach "
                  "instead of a window of launches. The copies the selection does not need are ended at once. "
                  "1 when memory or CPUs are short; 0 is --no-early-start")
      ->check(CLI::Range(0, static_cast<int>(profile::InterruptGuard::kMaxGroupsToEnd)))
      ->capture_default_str();
  cmd->add_flag("--no-early-start", opt->no_early_start,
                "Start the deep pass's program after discovery (by default copies of it start beside discovery: "
                "--early-programs; use this for a program that cannot run more than once at a time)");
  cmd->add_flag("--quiet", opt->quiet, "Do not echo the program's output (it is still logged)");
  cmd->add_flag("--verbose", opt->run.verbose, "Print where the time went, step by step (also in manifest.json)");
  add_rules_option(cmd, opt->rule_files);
  return {cmd, [opt] { return run_profile_command(*opt); }};
}

}  // namespace kernlens::cli
