// How each figure of a report was obtained, said beside it: on hover in HTML, as a mark with
// a footnote under its table. Four kinds, as an engineer asks "where does this number come
// from?": measured on every launch it covers, scaled up from the launches that were measured,
// analytic (a formula over the model's size, or a count the user gave), assumed (a default).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/analysis/analysis.h"

namespace kernlens::report {

enum class How { kMeasured, kScaled, kAnalytic, kAssumed };

struct Provenance {
  How how = How::kMeasured;
  std::string text;  // "measured by ncu on 1 of 384 launches (0.3% of its time)"
};

// The mark a figure of this kind carries in a table ("" for measured) and the footnote that
// explains the mark.
std::string_view how_mark(How how);
std::string_view how_footnote(How how);
std::string_view how_name(How how);  // "measured", "scaled", ...

// The less certain of two kinds: a figure computed from a scaled and an assumed one is assumed.
How weaker(How a, How b);

// A stage's (or the whole profile's) FLOPs and MFU. The MFU's kind is the weaker of its FLOPs'
// and its precision's; its text is how it was computed, or why it is missing. Absent when
// there is nothing to say.
std::optional<Provenance> flops_provenance(const analysis::StageWork& work);
Provenance mfu_provenance(const analysis::StageWork& work);

// A kernel's deep figures (FLOP/byte, FLOP/s): measured when ncu measured every launch of it,
// else scaled from the ones it did. `deep_launches` counts its launches with ncu metrics.
Provenance deep_provenance(const analysis::KernelMetrics& m, std::uint64_t deep_launches);

}  // namespace kernlens::report
