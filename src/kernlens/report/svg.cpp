#include "kernlens/report/svg.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kernlens/report/format.h"

namespace kernlens::report {

Svg::Svg(std::string_view id, std::string_view css_class, double width, double height, std::string_view label) {
  out_ = fmt::format(
      "<svg id=\"{}\" class=\"{}\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\">\n",
      html_escape(id), html_escape(css_class), width, height, width, height, html_escape(label));
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view css_class) {
  out_ += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"{}\"/>\n", x1, y1, x2, y2,
                      html_escape(css_class));
}

void Svg::rect(double x, double y, double w, double h, std::string_view css_class, std::string_view title,
               std::string_view style) {
  out_ += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" class=\"{}\"", x, y,
                      std::max(w, 0.0), std::max(h, 0.0), html_escape(css_class));
  if (!style.empty()) out_ += fmt::format(" style=\"{}\"", html_escape(style));
  if (title.empty()) {
    out_ += "/>\n";
  } else {
    out_ += fmt::format("><title>{}</title></rect>\n", html_escape(title));
  }
}

void Svg::circle(double cx, double cy, double r, std::string_view css_class, std::string_view title) {
  out_ += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" class=\"{}\"><title>{}</title></circle>\n", cx, cy,
                      r, html_escape(css_class), html_escape(title));
}

void Svg::text(double x, double y, std::string_view s, std::string_view css_class, std::string_view anchor,
               std::string_view title) {
  text_lines(x, y, {std::string(s)}, 0, css_class, anchor, title);
}

void Svg::text_lines(double x, double y, const std::vector<std::string>& lines, double line_px,
                     std::string_view css_class, std::string_view anchor, std::string_view title) {
  out_ += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"{}\" text-anchor=\"{}\">", x, y, html_escape(css_class),
                      html_escape(anchor));
  if (!title.empty()) out_ += fmt::format("<title>{}</title>", html_escape(title));
  if (lines.size() == 1) {
    out_ += html_escape(lines.front());
  } else {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      out_ += fmt::format("<tspan x=\"{:.1f}\" dy=\"{:.1f}\">{}</tspan>", x, i == 0 ? 0.0 : line_px, html_escape(lines[i]));
    }
  }
  out_ += "</text>\n";
}

std::string Svg::finish() {
  out_ += "</svg>\n";
  return std::move(out_);
}

LogAxis LogAxis::around(double min_v, double max_v, double px_lo, double px_hi) {
  double lo = std::pow(10.0, std::floor(std::log10(min_v)));
  double hi = std::pow(10.0, std::ceil(std::log10(max_v)));
  if (hi <= lo) hi = lo * 10;
  return LogAxis{lo, hi, px_lo, px_hi};
}

double LogAxis::map(double v) const {
  double t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  return px_lo + t * (px_hi - px_lo);
}

std::vector<double> LogAxis::decades() const {
  std::vector<double> out;
  for (int k = static_cast<int>(std::lround(std::log10(lo))); k <= static_cast<int>(std::lround(std::log10(hi))); ++k) {
    out.push_back(std::pow(10.0, k));
  }
  return out;
}

double LinearAxis::map(double v) const {
  if (hi <= lo) return px_lo;
  return px_lo + (v - lo) / (hi - lo) * (px_hi - px_lo);
}

}  // namespace kernlens::report
