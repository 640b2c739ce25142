// libFuzzer harness: the Nsight Compute raw-page reader alone, on any bytes.
#include "fuzz_common.h"
#include "kernlens/ingest/ncu/raw.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kernlens::fuzz::run_reader(kernlens::model::InputFormat::kNcuRawCsv,
                             kernlens::fuzz::as_text(data, size));
  return 0;
}
