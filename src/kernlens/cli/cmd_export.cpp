// kernlens export INPUT... --format perfetto [-o FILE] [--rules FILE]
#include <memory>
#include <string>
#include <vector>

#include "kernlens/cli/commands.h"
#include "kernlens/report/perfetto_export.h"

namespace kernlens::cli {
namespace {

struct ExportOptions {
  std::vector<std::string> inputs;
  std::string format = "perfetto";
  std::string output = "-";
  std::vector<std::string> rule_files;
};

int run_export(const ExportOptions& opt) {
  std::optional<names::KernelClassifier> classifier = load_classifier(opt.rule_files);
  if (!classifier) return kExitBadInput;
  auto loaded = load_inputs(opt.inputs, *classifier, {});
  if (!loaded) return kExitBadInput;
  return write_output(opt.output, report::perfetto_trace(loaded->profile, loaded->analysis));
}

}  // namespace

Command add_export_command(CLI::App& app) {
  auto opt = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export", "The GPU timeline as a Chrome/Perfetto trace (JSON) to open in ui.perfetto.dev beside the report.");
  cmd->footer(
      "INPUT is what `kernlens analyze` reads: a run directory of `kernlens profile`, or export files.\n"
      "The trace has a process per GPU and a track per CUDA stream; kernels are named by their base\n"
      "name, with the whole name, library, operation class, bottleneck, grid and block and Nsight\n"
      "Compute's figures as args; NVTX stages are slices around their kernels. Kernels of inputs\n"
      "without a timeline (Nsight Compute) are laid end to end in launch order, and the trace says so.\n"
      "Open it in https://ui.perfetto.dev (Open trace file) or chrome://tracing; `kernlens analyze\n"
      "trace.json` reads it back as the same kernels, launches and kernel time.\n"
      "Examples:\n"
      "  kernlens export runs/llama --format perfetto -o llama.trace.json\n"
      "  kernlens export timeline.sqlite -o trace.json");
  cmd->add_option("INPUT", opt->inputs, "Run directory or export files to read")->required()->type_name("PATH");
  cmd->add_option("--format", opt->format, "perfetto: Chrome trace event JSON (Perfetto, chrome://tracing)")
      ->check(CLI::IsMember({"perfetto"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", opt->output, "Write to FILE instead of stdout ('-')")
      ->type_name("FILE")
      ->capture_default_str();
  add_rules_option(cmd, opt->rule_files);
  return {cmd, [opt] { return run_export(*opt); }};
}

}  // namespace kernlens::cli
