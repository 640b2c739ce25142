// top_kernels RUN [DB]: what a run spends its GPU time on, through kernlens's C++ API; with a
// run database, its most popular kernels too. Bad input: the error's file and line, exit 2.
#include <cstdio>
#include <string>
#include <variant>

#include <kernlens/kernlens.h>

namespace kl = kernlens::api;

std::string cell_text(const kl::Cell& c) {
  if (const auto* s = std::get_if<std::string>(&c)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&c)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&c)) return std::to_string(*d);
  return "";
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: top_kernels RUN [DB]\n");
    return 2;
  }
  try {
    kl::Analysis analysis = kl::Analysis::load({argv[1]});
    std::printf("%s\n", analysis.summary().c_str());
    std::printf("launch records: %zu\n", analysis.launches().rows.size());
    if (argc > 2) {
      kl::Table popular = kl::Database::open(argv[2]).view("popularity");
      for (const auto& row : popular.rows) std::printf("popular: %s\n", cell_text(row.at(0)).c_str());
    }
  } catch (const kl::Error& e) {
    std::fprintf(stderr, "top_kernels: error: %s (file '%s', line %lld)\n", e.what(), e.file().c_str(),
                 static_cast<long long>(e.line()));
    return 2;
  }
  return 0;
}
