// kernlens demo [-o FILE] [--data DIR]: the whole analysis on the real H100 profiles shipped in
// examples/data, offline, so that a new user sees a report before touching a GPU.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kernlens/cli/commands.h"
#include "kernlens/cli/load_analysis.h"
#include "kernlens/report/text_report.h"

namespace kernlens::cli {
namespace {

namespace fs = std::filesystem;

// The run directory the demo analyzes, inside examples/data.
constexpr std::string_view kDemoRun = "runs/llama_prefill";

struct DemoOptions {
  std::string output = "kernlens-demo-report.html";
  std::string data_dir;  // empty: examples/data here, else the source tree's
};

// examples/data in the working directory (a checkout's root), else the one of the source tree
// this binary was built from.
std::string find_data_dir(const std::string& given) {
  if (!given.empty()) return given;
  std::error_code ec;
  for (const std::string& candidate : {std::string("examples/data"), std::string(KERNLENS_EXAMPLES_DIR)}) {
    if (fs::is_directory(fs::path(candidate) / kDemoRun, ec)) return candidate;
  }
  return KERNLENS_EXAMPLES_DIR;
}

int run_demo(const DemoOptions& opt) {
  const std::string run = (fs::path(find_data_dir(opt.data_dir)) / kDemoRun).string();
  auto loaded = load_analysis({run}, {}, analysis::AnalysisOptions{});
  if (!loaded) return kExitBadInput;
  std::fputs(report::analysis_text(loaded->profile, loaded->analysis, report::TextOptions{5, 90}).c_str(), stdout);
  if (int rc = write_report(*loaded, "html", 25, opt.output); rc != kExitOk) return rc;
  std::error_code ec;
  fs::path written = fs::absolute(opt.output, ec);
  std::printf("\nkernlens demo: analyzed %s (a real H100 run: llama-like model, prefill)\n"
              "kernlens demo: wrote the report to %s\n"
              "               open it in a browser; make your own with: kernlens report RUN_DIR -o report.html\n",
              run.c_str(), (ec ? fs::path(opt.output) : written).string().c_str());
  return kExitOk;
}

}  // namespace

Command add_demo_command(CLI::App& app) {
  auto opt = std::make_shared<DemoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "Analyze the real H100 profiles in examples/data and write an HTML report (no GPU, no network).");
  cmd->add_option("-o,--output", opt->output, "Where to write the report")->type_name("FILE")->capture_default_str();
  cmd->add_option("--data", opt->data_dir, "The examples/data directory (default: ./examples/data, else the source tree's)")
      ->type_name("DIR");
  return {cmd, [opt] { return run_demo(*opt); }};
}

}  // namespace kernlens::cli
