// libFuzzer harness: the PyTorch trace reader on any bytes, and its tokenizer fed the same
// bytes in three windows, which must give the parts (or the error) of one window; then the
// reader on one thread and with the events cut into parts on three (--threads), which must
// read the same.
#include <tuple>
#include <vector>

#include "fuzz_common.h"
#include "kernlens/ingest/json/trace_tokenizer.h"
#include "kernlens/ingest/pytorch/trace.h"
#include "kernlens/ingest/reader.h"

using namespace kernlens;

namespace {

using Part = std::tuple<int, std::string, std::string, std::uint64_t, std::int64_t>;

// The parts of `bytes` fed in windows cut at `cuts`, then the error (empty when none).
std::pair<std::vector<Part>, std::string> parts_of(std::string_view bytes, std::vector<std::size_t> cuts) {
  ingest::TraceTokenizer tokens("fuzz.json");
  std::vector<Part> parts;
  cuts.push_back(bytes.size());
  std::string window;
  std::size_t from = 0;
  for (std::size_t i = 0; i < cuts.size(); ++i) {
    window += bytes.substr(from, cuts[i] - from);
    from = cuts[i];
    tokens.set_window(window, i + 1 == cuts.size());
    while (true) {
      auto part = tokens.next();
      if (!part) return {parts, part.error().to_string()};
      if (!*part) break;
      const ingest::TracePart& t = **part;
      parts.emplace_back(static_cast<int>(t.kind), std::string(t.key), std::string(t.value), t.offset, t.line);
    }
    window.erase(0, tokens.consumed());
  }
  return {parts, ""};
}

// What a read gave, as text: the status, warnings, each launch's fields and stages.
std::string read_on(std::string_view bytes, unsigned threads) {
  model::Profile p;
  p.inputs.push_back(model::InputInfo{"fuzz.json", model::InputFormat::kPytorchTrace, "", {}, {}});
  ingest::ReadOptions options;
  options.threads = threads;
  options.min_part_bytes = 1;
  ingest::ReadContext ctx{"fuzz.json", p, 0, {}, &options};
  Status s = ingest::read_pytorch_trace(bytes, ctx);
  std::string out = s ? "ok\n" : s.error().to_string() + "\n";
  for (const auto& w : p.inputs[0].warnings) out += w.to_string() + "\n";
  for (const auto& l : p.launches) {
    out += p.names[l.name] + " " + std::to_string(l.id) + " " + std::to_string(l.start_ns.value_or(-1)) + " " +
           std::to_string(l.duration_ns.value_or(-1)) + " " + p.processes[l.process].name + " " +
           std::to_string(l.thread_id) + " " + model::push_pop_path(p.stages[l.stage]) + " " +
           std::to_string(l.device_ordinal) + ":";
    for (const auto& m : p.metrics_of(l)) out += " " + p.metrics[m.id].name + "=" + std::to_string(m.value);
    out += "\n";
  }
  for (const auto& r : p.stage_ranges) {
    out += model::push_pop_path(p.stages[r.stage]) + " " + std::to_string(r.start_ns) + " " + std::to_string(r.end_ns) + "\n";
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes = fuzz::as_text(data, size);
  fuzz::run_reader(kernlens::model::InputFormat::kPytorchTrace, bytes);
  fuzz::check(parts_of(bytes, {}) == parts_of(bytes, {size / 3, size * 2 / 3}),
              "windows cut differently gave different parts");
  fuzz::check(read_on(bytes, 1) == read_on(bytes, 3), "three threads read otherwise than one");
  return 0;
}
