// libFuzzer harness: the nsys SQLite reader on any bytes, opened in memory through
// sqlite3_deserialize as `kernlens analyze` opens files under 32 MB. Seeds are small copies of
// the fixtures (scripts/fixtures/make_nsys_fixture.py seed), so that mutations reach the reader's
// own code behind SQLite's checks: missing tables and columns, odd values, NVTX projection. Each
// input is read on one thread and again on four (--threads 4: the kernels in rowid ranges, and
// calls in key order in ranges for one builder), which must give the same launches, warnings
// and error.
#include <fmt/format.h>

#include "fuzz_common.h"
#include "kernlens/ingest/nsys/sqlite.h"

namespace {

using namespace kernlens;

// What the reader put in the profile and returned, as text.
std::string read_on(std::string_view bytes, unsigned threads) {
  model::Profile profile;
  profile.inputs.push_back(
      model::InputInfo{"fuzz.sqlite", model::InputFormat::kNsysSqlite, "", {}, {}});
  ingest::ReadOptions options;
  options.threads = threads;
  options.min_part_bytes = 1;  // split whatever the size
  ingest::ReadContext ctx{"fuzz.sqlite", profile, 0, {}, &options};
  Status status = ingest::read_nsys_sqlite(bytes, ctx);
  if (!status) fuzz::check_error_line(status.error(), bytes);
  for (const auto& w : profile.inputs[0].warnings) fuzz::check_error_line(w, bytes);
  fuzz::check_profile(profile);
  std::string out = status ? "ok\n" : status.error().to_string() + "\n";
  for (const auto& w : profile.inputs[0].warnings) out += w.to_string() + "\n";
  for (const auto& l : profile.launches) {
    out += fmt::format("{} {} {} {} {} {} {} {} {} {}\n", profile.names[l.name],
                       l.start_ns.value_or(-1), l.duration_ns.value_or(-1), l.id, l.process,
                       l.thread_id, l.device_ordinal, profile.config_of(l).grid.x,
                       model::push_pop_path(profile.stages[l.stage]), static_cast<int>(l.kind));
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = kernlens::fuzz::as_text(data, size);
  kernlens::fuzz::check(read_on(bytes, 1) == read_on(bytes, 4),
                        "four threads read otherwise than one");
  return 0;
}
