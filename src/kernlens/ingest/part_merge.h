// Merging what a part of an input, read on a thread of its own into a profile of its own,
// adds to the profile (the readers' --threads, common/parallel_chunks.h): the merge every
// splitting reader shares, so that parts merged in order give the profile one thread gives.
#pragma once

#include <cstdint>

#include "kernlens/model/profile.h"

namespace kernlens::ingest {

// Appends the launches, metric samples and warnings `from` holds to `into`, as if read
// there: names, processes, stages and launch configurations interned again in the order the part first saw them,
// metric samples moved to the end of the pool. The samples' metric ids must be `into`'s
// already; devices are the reader's to merge. `from` is left emptied of what was moved.
void append_part(model::Profile& into, model::Profile& from, std::uint32_t input_index);

}  // namespace kernlens::ingest
