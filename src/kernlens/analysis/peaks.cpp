#include "kernlens/analysis/peaks.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace kernlens::analysis {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::optional<FlopPath> path_by_name(std::string_view name) {
  for (std::size_t i = 0; i < kFlopPathCount; ++i) {
    if (path_name(static_cast<FlopPath>(i)) == name) return static_cast<FlopPath>(i);
  }
  return std::nullopt;
}

std::optional<double> parse_positive(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v) || v <= 0) return std::nullopt;
  return v;
}

// One "KEY VALUE" line of a [GPU] section.
Status parse_entry(PeakRates& gpu, std::string_view line, const Error& where) {
  auto space = line.find_first_of(" \t");
  std::string_view key = line.substr(0, space);
  std::string_view value = space == std::string_view::npos ? std::string_view{} : trim(line.substr(space));
  auto fail = [&](std::string message) { return Status(Error{where.file, where.line, std::move(message)}); };
  if (value.empty()) return fail(fmt::format("'{}' has no value", key));
  if (key == "source") {
    gpu.source = std::string(value);
    return ok_status();
  }
  auto number = parse_positive(value);
  if (!number) return fail(fmt::format("'{}': expected a positive number, found '{}'", key, value));
  if (key == "dram") {
    gpu.dram_bytes_per_s = *number * 1e12;
    return ok_status();
  }
  auto path = path_by_name(key);
  if (!path) {
    return fail(fmt::format("unknown key '{}' (expected source, dram, fp64, fp32, fp16, tensor_fp64, "
                            "tensor_tf32, tensor_fp16, tensor_bf16, tensor_fp8, tensor_int8)", key));
  }
  gpu.flops_per_s[static_cast<std::size_t>(*path)] = *number * 1e12;
  return ok_status();
}

}  // namespace

Result<GpuPeakTable> GpuPeakTable::parse(std::string_view text, std::string_view origin) {
  GpuPeakTable table;
  std::int64_t line_no = 0;
  std::int64_t section_line = 0;
  auto section_error = [&]() -> std::optional<Error> {
    if (!table.gpus_.empty() && table.gpus_.back().source.empty()) {
      return make_error(std::string(origin), section_line, "GPU section has no 'source' line");
    }
    return std::nullopt;
  };
  while (!text.empty()) {
    ++line_no;
    auto eol = text.find('\n');
    std::string_view line = trim(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    if (line.empty() || line.front() == '#') continue;
    if (line.front() == '[') {
      if (line.back() != ']' || trim(line.substr(1, line.size() - 2)).empty()) {
        return make_error(std::string(origin), line_no, "expected a section header '[DEVICE NAME]'");
      }
      if (auto e = section_error()) return *e;
      std::string_view name = trim(line.substr(1, line.size() - 2));
      if (table.find(name)) {
        return make_error(std::string(origin), line_no, fmt::format("GPU '{}' is listed twice", name));
      }
      table.gpus_.emplace_back().gpu = std::string(name);
      section_line = line_no;
      continue;
    }
    if (table.gpus_.empty()) {
      return make_error(std::string(origin), line_no, "a peak outside a '[DEVICE NAME]' section");
    }
    if (Status s = parse_entry(table.gpus_.back(), line, Error{std::string(origin), line_no, {}}); !s) {
      return s.error();
    }
  }
  if (auto e = section_error()) return *e;
  return table;
}

const PeakRates* GpuPeakTable::find(std::string_view device_name) const {
  device_name = trim(device_name);
  for (const auto& g : gpus_) {
    if (iequal(g.gpu, device_name)) return &g;
  }
  return nullptr;
}

const GpuPeakTable& builtin_gpu_peaks() {
  // The built-in table is tested (peaks_test); a bad edit fails the build's tests, not users.
  static const GpuPeakTable table = [] {
    auto parsed = GpuPeakTable::parse(builtin_gpu_peaks_text(), "data/gpu_peaks.txt");
    return parsed ? std::move(parsed).value() : GpuPeakTable{};
  }();
  return table;
}

std::optional<PeakRates> peaks_from_metrics(const MetricResolver& resolver, const model::Launch& launch,
                                            const model::Device& device) {
  PeakRates peaks;
  peaks.gpu = device.name;
  if (device.sm_clock_max_hz) {
    for (std::size_t i = 0; i < kFlopPathCount; ++i) {
      if (auto per_cycle = resolver.peak_flops_per_cycle(launch, static_cast<FlopPath>(i))) {
        peaks.flops_per_s[i] = per_cycle->value * *device.sm_clock_max_hz;
      }
    }
  }
  auto dram = resolver.dram_peak_bytes_per_cycle(launch);
  if (dram && device.memory_clock_max_hz) peaks.dram_bytes_per_s = dram->value * *device.memory_clock_max_hz;
  bool any = peaks.dram_bytes_per_s || std::any_of(peaks.flops_per_s.begin(), peaks.flops_per_s.end(),
                                                   [](const auto& v) { return v.has_value(); });
  if (!any) return std::nullopt;
  peaks.source = "ncu peak_sustained per cycle x the GPU's maximum clocks";
  return peaks;
}

}  // namespace kernlens::analysis
