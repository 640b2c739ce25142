// libFuzzer harness: the nsys stats kernel summary reader alone, on any bytes.
#include "fuzz_common.h"
#include "kernlens/ingest/nsys/stats.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kernlens::fuzz::run_reader(kernlens::model::InputFormat::kNsysStatsCsv,
                             kernlens::fuzz::as_text(data, size));
  return 0;
}
