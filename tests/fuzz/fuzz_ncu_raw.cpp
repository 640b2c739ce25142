// libFuzzer harness: the Nsight Compute raw-page reader alone, on any bytes; then the same
// bytes on one thread and cut into parts on three (--threads), which must read the same.
#include "fuzz_common.h"
#include "kernlens/ingest/ncu/raw.h"

namespace {

// What a read gave, as text: the status, warnings, and each launch's fields and metrics.
std::string read_on(std::string_view bytes, unsigned threads) {
  using namespace kernlens;
  model::Profile p;
  p.inputs.push_back(model::InputInfo{"fuzz.csv", model::InputFormat::kNcuRawCsv, "", {}, {}});
  ingest::ReadOptions options;
  options.threads = threads;
  options.min_part_bytes = 1;
  ingest::ReadContext ctx{"fuzz.csv", p, 0, {}, &options};
  Status s = ingest::read_ncu_raw_csv(bytes, ctx);
  std::string out = s ? "ok\n" : s.error().to_string() + "\n";
  for (const auto& w : p.inputs[0].warnings) out += w.to_string() + "\n";
  for (const auto& d : p.devices) out += std::to_string(d.ordinal) + d.name + d.cc + std::to_string(d.sm_count.value_or(-1)) + "\n";
  for (const auto& l : p.launches) {
    out += p.names[l.name] + " " + std::to_string(l.id) + " " + std::to_string(l.duration_ns.value_or(-1)) + " " +
           p.processes[l.process].name + " " + model::push_pop_path(p.stages[l.stage]) + " " +
           std::to_string(l.device_ordinal) + ":";
    for (const auto& m : p.metrics_of(l)) out += " " + std::to_string(m.id) + "=" + std::to_string(m.value);
    out += "\n";
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = kernlens::fuzz::as_text(data, size);
  kernlens::fuzz::run_reader(kernlens::model::InputFormat::kNcuRawCsv, bytes);
  kernlens::fuzz::check(read_on(bytes, 1) == read_on(bytes, 3), "three threads read otherwise than one");
  return 0;
}
