// libFuzzer harness: the PyTorch trace reader on any bytes, and its tokenizer fed the same
// bytes in three windows, which must give the parts (or the error) of one window.
#include <tuple>
#include <vector>

#include "fuzz_common.h"
#include "kernlens/ingest/json/trace_tokenizer.h"
#include "kernlens/ingest/pytorch/trace.h"

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes = fuzz::as_text(data, size);
  fuzz::run_reader(kernlens::model::InputFormat::kPytorchTrace, bytes);
  fuzz::check(parts_of(bytes, {}) == parts_of(bytes, {size / 3, size * 2 / 3}),
              "windows cut differently gave different parts");
  return 0;
}
