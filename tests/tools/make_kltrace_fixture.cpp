// Writes the small .kltrace fixture (kltrace_fixture.h) with kernlens's own writer:
//   build/tests/make_kltrace_fixture tests/fixtures/kltrace/decode_small.kltrace
#include <cstdio>
#include <fstream>

#include "kltrace_fixture.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_kltrace_fixture OUT.kltrace\n");
    return 2;
  }
  const std::string bytes = kernlens::trace_format::encode(kernlens::test::small_decode_trace());
  std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return out ? 0 : 1;
}
