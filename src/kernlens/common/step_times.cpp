#include "kernlens/common/step_times.h"

#include <fmt/format.h>

#include <algorithm>

namespace kernlens {

StepTimes::Scope::Scope(StepTimes& times, std::string name)
    : times_(times), index_(times.steps_.size()), start_(Clock::now()) {
  times_.steps_.push_back(Step{std::move(name), 0, times_.depth_++});
}

StepTimes::Scope::~Scope() {
  times_.steps_[index_].wall_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count();
  --times_.depth_;
}

std::string StepTimes::text() const {
  std::size_t width = 0;
  for (const Step& s : steps_) width = std::max(width, 2 * static_cast<std::size_t>(s.depth) + s.name.size());
  std::string out;
  for (const Step& s : steps_) {
    const std::string label = std::string(2 * static_cast<std::size_t>(s.depth), ' ') + s.name;
    out += fmt::format("  {:<{}}  {:8.3f} s\n", label, width, static_cast<double>(s.wall_ns) / 1e9);
  }
  return out;
}

}  // namespace kernlens
