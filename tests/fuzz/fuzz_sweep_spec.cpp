// libFuzzer harness: a sweep file (TOML) read, checked and expanded into its points, on any
// bytes. Seeds: tests/fixtures/sweep/*.toml and scripts/device/sweep_small.toml.
#include <string>

#include "fuzz_common.h"
#include "kernlens/sweep/plan.h"
#include "kernlens/sweep/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace kernlens;
  const std::string_view text = fuzz::as_text(data, size);
  const std::int64_t lines = static_cast<std::int64_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  auto spec = sweep::parse_spec(text, "/fuzz/sweep.toml");
  if (!spec) {
    fuzz::check(spec.error().line >= 0 && spec.error().line <= lines, "a spec error's line is outside the file");
    return 0;
  }
  fuzz::check(!spec->axes.empty() && !spec->command.empty(), "a spec without parameters or command was accepted");
  auto plan = sweep::make_plan(std::move(spec).value(), "kernlens");
  if (!plan) return 0;
  std::size_t product = 1;
  for (const auto& axis : plan->spec.axes) product *= axis.size();
  fuzz::check(plan->points.size() == product, "the points are not the product of the axes");
  for (const auto& p : plan->points) {
    fuzz::check(!p.id.empty() && p.id.find('/') == std::string::npos, "a point name that is not a directory name");
    fuzz::check(sweep::profile_argv(*plan, p, true).size() > p.command.size() + 2, "a point's argv lost its command");
  }
  return 0;
}
