#include "kernlens/report/format.h"

#include <cmath>
#include <cstdint>
#include <utility>

#include <fmt/format.h>

#include "kernlens/common/text.h"

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

std::string human_si(double v, std::string_view unit) {
  static constexpr std::pair<double, const char*> kPrefixes[] = {
      {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [factor, prefix] : kPrefixes) {
    if (std::fabs(v) >= factor) {
      double x = v / factor;
      int decimals = x >= 100 ? 1 : x >= 10 ? 2 : 3;
      return fmt::format("{:.{}f} {}{}", x, decimals, prefix, unit);
    }
  }
  return fmt::format("{:.4g} {}", v, unit);
}

std::string wrap(std::string_view raw, std::size_t width, std::size_t indent) {
  const std::string shown = escape_controls(raw);
  std::string_view text = shown;
  std::string out;
  std::size_t column = indent;  // the caller has printed `indent` columns already
  bool first = true;
  while (!text.empty()) {
    auto space = text.find(' ');
    std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
    if (word.empty()) continue;
    if (!first && column + 1 + word.size() > width) {
      out += '\n';
      out.append(indent, ' ');
      column = indent;
    } else if (!first) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    first = false;
  }
  return out;
}

std::string human_percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100.0); }

std::string ellipsize(std::string_view raw, std::size_t width) {
  const std::string shown = escape_controls(raw);
  std::string_view s = shown;
  if (width == 0) return shown;
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

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace kernlens::report
