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

std::size_t display_width(std::string_view s) {
  std::size_t points = 0;
  for (char c : s) points += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return points;
}

namespace {

// The byte offset after `points` code points of `s` (its size when shorter).
std::size_t offset_of_point(std::string_view s, std::size_t points) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (points-- == 0) return i;
  }
  return s.size();
}

// `text` over lines of at most `width` code points, each line ending after a break character
// where one falls past its first third.
std::vector<std::string> wrap_word(std::string_view text, std::size_t width) {
  std::vector<std::string> lines;
  while (display_width(text) > width) {
    std::size_t cut = offset_of_point(text, width);
    std::size_t third = offset_of_point(text, width / 3);
    for (std::size_t i = cut; i > third; --i) {
      if (std::string_view(":/_. ").find(text[i - 1]) != std::string_view::npos) {
        cut = i;
        break;
      }
    }
    lines.emplace_back(text.substr(0, cut));
    text.remove_prefix(cut);
  }
  if (!text.empty()) lines.emplace_back(text);
  return lines;
}

}  // namespace

std::vector<std::string> lane_label_lines(std::string_view path, std::size_t width) {
  if (width == 0 || display_width(path) <= width) return {std::string(path)};
  const std::size_t first_end = path.find('/'), leaf_start = path.rfind('/');
  if (first_end == std::string_view::npos) return wrap_word(path, width);
  const std::string_view first = path.substr(0, first_end), leaf = path.substr(leaf_start + 1);
  const std::string middle = leaf_start == first_end ? "/" : "/\xE2\x80\xA6/";  // "/…/" when ranges are left out
  if (display_width(first) + display_width(middle) + display_width(leaf) <= width) {
    return {std::string(first) + middle + std::string(leaf)};
  }
  std::vector<std::string> lines = wrap_word(std::string(first) + middle, width);
  for (auto& line : wrap_word(leaf, width)) lines.push_back(std::move(line));
  return lines;
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
