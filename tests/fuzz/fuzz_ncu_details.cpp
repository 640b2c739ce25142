// libFuzzer harness: the Nsight Compute details-page reader alone, on any bytes.
#include "fuzz_common.h"
#include "kernlens/ingest/ncu/details.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kernlens::fuzz::run_reader(kernlens::model::InputFormat::kNcuDetailsCsv,
                             kernlens::fuzz::as_text(data, size));
  return 0;
}
