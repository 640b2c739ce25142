// After all inputs are read: the same launch seen through two ncu pages of one report (raw +
// details) is merged, and ncu summary rows whose launches another input of the same process
// already holds are dropped, so no kernel time is counted twice. load/ calls it; a caller of
// read_input alone calls it after its last input.
#pragma once

#include "kernlens/model/profile.h"

namespace kernlens::ingest {

// Records a warning on each input whose summary rows were dropped.
void reconcile_inputs(model::Profile& profile);

}  // namespace kernlens::ingest
