// Which inflater pays for a gzip trace: zlib (what kernlens used), ISA-L's igzip and libdeflate
// on the same compressed bytes, in memory, one CPU. zlib and ISA-L stream (a bounded 1 MiB
// output window, as the readers use them); libdeflate has no streaming interface and inflates
// into one buffer of the whole output, which is the most it could do. Also times
// kernlens::Inflater, the library's own streaming inflater (whatever it is built on).
//
//   KERNLENS_BENCH_GZ=FILE.json.gz build/bench/bench_inflate
//
// The default file is the big trace of `ninja bench_big_trace` compressed with `gzip -6`
// (`ninja bench_big_trace_gz`).
#include <benchmark/benchmark.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "kernlens/common/gzip.h"

namespace {

constexpr std::size_t kWindow = 1 << 20;

struct Compressed {
  std::string path, bytes, error;
};

const Compressed& input() {
  static const Compressed in = [] {
    const char* env = std::getenv("KERNLENS_BENCH_GZ");
    Compressed c{env && *env ? env : KERNLENS_BENCH_DEFAULT_GZ, {}, {}};
    std::ifstream f(c.path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    c.bytes = s.str();
    if (c.bytes.size() < 18) c.error = c.path + ": missing or not gzip (set KERNLENS_BENCH_GZ or run ninja bench_big_trace_gz)";
    return c;
  }();
  return in;
}

// The inflated size the gzip trailer records (mod 2^32) of a single-member file.
std::size_t trailer_size(const std::string& gz) {
  std::uint32_t size = 0;
  std::memcpy(&size, gz.data() + gz.size() - 4, 4);
  return size;
}

void finish(benchmark::State& state, std::uint64_t out_bytes) {
  state.SetBytesProcessed(static_cast<std::int64_t>(out_bytes));
  state.counters["compressed_MB/s"] = benchmark::Counter(
      static_cast<double>(input().bytes.size()) * static_cast<double>(state.iterations()) / 1e6,
      benchmark::Counter::kIsRate);
}

void BM_Zlib(benchmark::State& state) {
  const auto& in = input();
  if (!in.error.empty()) return state.SkipWithError(in.error.c_str());
  auto out = std::make_unique<char[]>(kWindow);
  std::uint64_t total = 0;
  for (auto _ : state) {
    z_stream zs{};
    inflateInit2(&zs, 16 + MAX_WBITS);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.bytes.data()));
    zs.avail_in = static_cast<uInt>(in.bytes.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
      zs.next_out = reinterpret_cast<Bytef*>(out.get());
      zs.avail_out = kWindow;
      rc = inflate(&zs, Z_NO_FLUSH);
      benchmark::DoNotOptimize(out[0]);
    }
    if (rc != Z_STREAM_END) state.SkipWithError("zlib failed");
    total += zs.total_out;
    inflateEnd(&zs);
  }
  finish(state, total);
}
BENCHMARK(BM_Zlib)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_IsaL(benchmark::State& state) {
  const auto& in = input();
  if (!in.error.empty()) return state.SkipWithError(in.error.c_str());
  auto out = std::make_unique<char[]>(kWindow);
  auto st = std::make_unique<inflate_state>();
  std::uint64_t total = 0;
  for (auto _ : state) {
    isal_inflate_init(st.get());
    st->crc_flag = ISAL_GZIP;
    st->next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(in.bytes.data()));
    st->avail_in = static_cast<std::uint32_t>(in.bytes.size());
    int rc = ISAL_DECOMP_OK;
    while (rc == ISAL_DECOMP_OK && st->block_state != ISAL_BLOCK_FINISH) {
      st->next_out = reinterpret_cast<std::uint8_t*>(out.get());
      st->avail_out = kWindow;
      rc = isal_inflate(st.get());
      total += kWindow - st->avail_out;
      benchmark::DoNotOptimize(out[0]);
    }
    if (rc != ISAL_DECOMP_OK) state.SkipWithError("isa-l failed");
  }
  finish(state, total);
}
BENCHMARK(BM_IsaL)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Libdeflate(benchmark::State& state) {
  const auto& in = input();
  if (!in.error.empty()) return state.SkipWithError(in.error.c_str());
  const std::size_t size = trailer_size(in.bytes);
  auto out = std::make_unique<char[]>(size);
  std::memset(out.get(), 0, size);  // faulted in before timing, as a reused buffer would be
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  std::uint64_t total = 0;
  for (auto _ : state) {
    std::size_t got = 0;
    if (libdeflate_gzip_decompress(d, in.bytes.data(), in.bytes.size(), out.get(), size, &got) != LIBDEFLATE_SUCCESS) {
      state.SkipWithError("libdeflate failed (a multi-member file, or over 4 GiB?)");
      break;
    }
    total += got;
  }
  libdeflate_free_decompressor(d);
  finish(state, total);
}
BENCHMARK(BM_Libdeflate)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_KernlensInflater(benchmark::State& state) {
  const auto& in = input();
  if (!in.error.empty()) return state.SkipWithError(in.error.c_str());
  auto out = std::make_unique<char[]>(kWindow);
  std::uint64_t total = 0;
  for (auto _ : state) {
    kernlens::Inflater inflater(in.path);
    std::string_view rest = in.bytes;
    while (!inflater.done()) {
      auto n = inflater.inflate(rest, out.get(), kWindow, true);
      if (!n) {
        state.SkipWithError(n.error().to_string().c_str());
        break;
      }
      total += *n;
    }
  }
  finish(state, total);
}
BENCHMARK(BM_KernlensInflater)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
