// libFuzzer harness: the Nsight Compute summary-page reader alone, on any bytes.
#include "fuzz_common.h"
#include "kernlens/ingest/ncu/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kernlens::fuzz::run_reader(kernlens::model::InputFormat::kNcuSummaryCsv,
                             kernlens::fuzz::as_text(data, size));
  return 0;
}
