// kernlens demo [-o FILE] [--data DIR]: the whole analysis on a real H100 run shipped in
// examples/data, offline, so that a new user sees a report before touching a GPU. Prints the
// five lines a person reads first (where the time goes, the worst stage, the top kernel and
// why, the MFU, where the report is) and writes the HTML report.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernlens/cli/commands.h"
#include "kernlens/profile/tracer_command.h"
#include "kernlens/report/format.h"
#include "kernlens/report/headline.h"

namespace kernlens::cli {
namespace {

namespace fs = std::filesystem;

// The run the demo analyzes. Swapping the run is this one entry. Its manifest's tags name the
// model's config.json (beside it) and the sizes it ran, so analytic FLOPs stand beside the
// measured ones (load/workload.h).
struct DemoRun {
  const char* dir;    // inside examples/data
  const char* about;  // what the run is, for people
};

// examples/workloads/ground_truth.py --model moe on the H100 (scripts/device/ground_truth.sh).
const DemoRun kDemoRun = {"runs/mixtral_moe_tracer",
                          "a real H100 run of a Mixtral-like mixture of experts (8 experts, top-2, grouped-query "
                          "attention): prefill of 8 x 384 tokens and 4 decode steps, kernlens tracer timeline, "
                          "Nsight Compute on the 16 hottest kernels"};

struct DemoOptions {
  std::string output = "kernlens-demo-report.html";
  std::string data_dir;  // empty: find_data_dir()'s candidates
};

// The demo data: the installed copy (../share/kernlens/examples beside this binary, so that an
// installed tree works wherever it is moved), else examples/data in the working directory (a
// checkout's root), else the source tree this binary was built from (not when
// KERNLENS_NO_SOURCE_DATA is set: the install test's way to prove the installed copy is used).
std::vector<std::string> data_dir_candidates() {
  std::vector<std::string> candidates;
  if (std::string exe_dir = profile::executable_dir(); !exe_dir.empty()) {
    candidates.push_back((fs::path(exe_dir) / ".." / "share" / "kernlens" / "examples").lexically_normal().string());
  }
  candidates.push_back("examples/data");
  if (!std::getenv("KERNLENS_NO_SOURCE_DATA")) candidates.push_back(KERNLENS_EXAMPLES_DIR);
  return candidates;
}

std::string find_data_dir(const std::string& given) {
  if (!given.empty()) return given;
  std::vector<std::string> candidates = data_dir_candidates();
  std::error_code ec;
  for (const std::string& candidate : candidates) {
    if (fs::is_directory(fs::path(candidate) / kDemoRun.dir, ec)) return candidate;
  }
  return candidates.front();  // the error then names the installed location
}

int run_demo(const DemoOptions& opt) {
  const std::string run = (fs::path(find_data_dir(opt.data_dir)) / kDemoRun.dir).string();
  std::optional<names::KernelClassifier> classifier = load_classifier({});
  if (!classifier) return kExitBadInput;
  auto loaded = load_inputs({run}, *classifier, {});
  if (!loaded) return kExitBadInput;
  if (int rc = write_report(*loaded, "html", 25, opt.output); rc != kExitOk) return rc;
  std::error_code ec;
  fs::path written = fs::absolute(opt.output, ec);
  auto lines = report::headline(loaded->profile, loaded->analysis);
  lines.push_back({"report", (ec ? fs::path(opt.output) : written).string() + " (open it in a browser)"});
  std::string about = report::wrap(fmt::format("kernlens demo: {}: {}", run, kDemoRun.about), 100, 2);
  std::printf("%s\n\n%s\n", about.c_str(), report::headline_text(lines).c_str());
  std::printf("Next: `kernlens analyze RUN` prints every table, `kernlens export RUN --format perfetto -o trace.json`\n"
              "writes the timeline for ui.perfetto.dev, `kernlens profile -- python3 your_model.py` profiles your own.\n");
  return kExitOk;
}

}  // namespace

Command add_demo_command(CLI::App& app) {
  auto opt = std::make_shared<DemoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "Analyze a real H100 run in examples/data, print what matters most and write an HTML report (no GPU, "
              "no network).");
  cmd->add_option("-o,--output", opt->output, "Where to write the report")->type_name("FILE")->capture_default_str();
  cmd->add_option("--data", opt->data_dir,
                  "The examples/data directory (default: the installed one, ../share/kernlens/examples beside "
                  "kernlens; else ./examples/data; else the source tree's)")
      ->type_name("DIR");
  return {cmd, [opt] { return run_demo(*opt); }};
}

}  // namespace kernlens::cli
