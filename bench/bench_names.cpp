// Throughput of kernel-name classification (demangle, base name, rules, GEMM fields): the
// issue's target is 1,000,000 names in under a second on one core.
//
// The names are built from the real names in tests/fixtures/names (Nsight Compute's and the
// PyTorch profiler's spellings), made distinct by varying a number in each: the last number
// of a demangled name, or a clone suffix ("[clone .7]"; ".7" when mangled) where there is
// none. They are taken round-robin, so each mix has the fixtures' proportions:
//   0  names as the tools print them by default (ncu, nsys, PyTorch traces: demangled)
//   1  every fixture name: one in five is mangled (ncu --print-kernel-base mangled)
//   2  only the mangled ones, some of which demangle to 5 KB
//   3  the names of tests/fixtures/names/public: CUTLASS 3 grouped GEMMs (mangled, 2 KB, they
//      demangle to 6 KB and need LLVM's demangler) and MoE routing kernels from public
//      captures of other frameworks: a worst case, not the mix of one profile
// The time is CPU time: the machine these figures come from is shared, and its wall clock
// counts other people's work.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "kernlens/names/classify.h"
#include "kernlens/names/demangle.h"

namespace kernlens::bench {
namespace {

constexpr std::size_t kNames = 1'000'000;

std::vector<std::string> fixture_names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) names.push_back(line);
  }
  std::sort(names.begin(), names.end());  // directory order varies
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// `name` with its k-th variation.
std::string variant(const std::string& name, std::size_t k) {
  std::string n = std::to_string(k);
  if (names::is_mangled(name)) return name + "." + n;  // a clone suffix the demangler knows
  std::size_t end = name.size();
  while (end > 0 && !is_digit(name[end - 1])) --end;
  if (end == 0) return name + " [clone ." + n + "]";
  std::size_t start = end;
  while (start > 0 && is_digit(name[start - 1])) --start;
  return name.substr(0, start) + n + name.substr(end);
}

enum class Mix { kDemangled, kAll, kMangled, kPublic };

const std::vector<std::string>& names_of(Mix mix) {
  static std::vector<std::string> cache[4];
  auto& out = cache[static_cast<int>(mix)];
  if (!out.empty()) return out;
  std::vector<std::string> base;
  const std::filesystem::path dir(KERNLENS_NAMES_FIXTURES);
  for (auto& name : fixture_names(mix == Mix::kPublic ? dir / "public" : dir)) {
    bool mangled = names::is_mangled(name);
    if (mix == Mix::kAll || mix == Mix::kPublic || (mix == Mix::kMangled) == mangled) base.push_back(std::move(name));
  }
  std::unordered_set<std::string> seen;
  for (std::size_t k = 0; out.size() < kNames; ++k) {
    for (const auto& name : base) {
      std::string v = variant(name, k);
      if (out.size() < kNames && seen.insert(v).second) out.push_back(std::move(v));
    }
  }
  return out;
}

// Arg: the mix (see the top of the file).
void BM_ClassifyNames(benchmark::State& state) {
  static const char* const kLabels[] = {"as printed (demangled)", "all fixture names", "mangled only",
                                        "public CUTLASS 3 and MoE names"};
  const auto& names = names_of(static_cast<Mix>(state.range(0)));
  auto classifier = names::KernelClassifier::load({});
  if (!classifier) {
    state.SkipWithError(classifier.error().to_string().c_str());
    return;
  }
  state.SetLabel(kLabels[state.range(0)]);
  std::size_t bytes = 0;
  for (const auto& n : names) bytes += n.size();
  for (auto _ : state) {
    for (const auto& name : names) {
      names::Classification c = classifier->classify(name);
      benchmark::DoNotOptimize(c.base_name.data());
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * names.size()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  state.counters["names"] = static_cast<double>(names.size());
}
BENCHMARK(BM_ClassifyNames)->Arg(0)->Arg(1)->Arg(2)->Arg(3)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kernlens::bench

BENCHMARK_MAIN();
