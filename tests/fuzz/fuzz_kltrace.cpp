// libFuzzer harness: the .kltrace reader (format.h's decoder, then the projection of NVTX
// ranges onto launches) on any bytes. Seeds: the writer's fixture and pieces of it.
#include "fuzz_common.h"
#include "kernlens/ingest/kltrace/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kernlens::fuzz::run_reader(kernlens::model::InputFormat::kKltrace, kernlens::fuzz::as_text(data, size));
  return 0;
}
