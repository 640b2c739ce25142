// What a report leaves out for want of an input, each with the one line that says which input
// would fill it. The HTML and Markdown reports leave such a section out and list these lines
// instead, so an empty chart or table never appears and nothing is said twice.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"

namespace kernlens::report {

enum class Part { kStages, kTimeline, kRoofline, kOpClasses, kStalls, kAdvice };

struct MissingPart {
  Part part;
  std::string_view id;     // "timeline": HTML ids "missing-timeline"
  std::string_view what;   // "GPU timeline, and the stages' GPU wall time, busy fraction and idle gaps"
  std::string_view needs;  // "a timeline: kernlens profile --discovery tracer or nsys, ..."
};

// The parts these inputs cannot fill, in report order. `top` is the report's kernel count
// (stalls and advice are about the top kernels).
std::vector<MissingPart> missing_parts(const model::Profile& profile, const analysis::Analysis& analysis,
                                       std::size_t top);

bool is_missing(const std::vector<MissingPart>& missing, Part part);

// Whether any kernel launch has a start time and a duration: a timeline to draw.
bool has_timeline(const model::Profile& profile);

}  // namespace kernlens::report
