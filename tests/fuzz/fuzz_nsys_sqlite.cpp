// libFuzzer harness: the nsys SQLite reader on any bytes, opened in memory through
// sqlite3_deserialize as `kernlens analyze` opens files under 32 MB. Seeds are small copies of
// the fixtures (scripts/fixtures/make_nsys_fixture.py seed), so that mutations reach the reader's own
// code behind SQLite's checks: missing tables and columns, odd values, NVTX projection.
#include "fuzz_common.h"
#include "kernlens/ingest/nsys/sqlite.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kernlens::fuzz::run_reader(kernlens::model::InputFormat::kNsysSqlite,
                             kernlens::fuzz::as_text(data, size));
  return 0;
}
