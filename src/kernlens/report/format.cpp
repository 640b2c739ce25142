#include "kernlens/report/format.h"

#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace kernlens::report {

std::string human_duration_ns(double ns) {
  struct Scale {
    double factor;
    const char* unit;
  };
  static constexpr Scale kScales[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}};
  for (const auto& s : kScales) {
    if (std::fabs(ns) >= s.factor) {
      double v = ns / s.factor;
      int decimals = v >= 100 ? 1 : v >= 10 ? 2 : 3;
      return fmt::format("{:.{}f} {}", v, decimals, s.unit);
    }
  }
  return fmt::format("{:.0f} ns", ns);
}

std::string human_percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100.0); }

std::string ellipsize(std::string_view s, std::size_t width) {
  if (width == 0) return std::string(s);
  std::size_t points = 0, cut = s.size();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // continuation byte
    if (points == width - 1) cut = i;
    ++points;
  }
  if (points <= width) return std::string(s);
  return std::string(s.substr(0, cut)) + "\xE2\x80\xA6";
}

nlohmann::ordered_json json_number(double v) {
  if (std::isfinite(v) && std::fabs(v) < 9.007199254740992e15 && v == std::floor(v)) {
    return static_cast<std::int64_t>(v);
  }
  return v;
}

}  // namespace kernlens::report
