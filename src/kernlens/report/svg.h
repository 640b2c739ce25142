// Inline SVG for the HTML report: a writer of the few elements the charts use (every text
// and title escaped) and the axes they are drawn on.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernlens::report {

class Svg {
 public:
  // An <svg> with this id and CSS class, `width` x `height` user units, scaled to its box.
  Svg(std::string_view id, std::string_view css_class, double width, double height, std::string_view label);
  // `css_class` styles the element; `title` (may be empty) is the hover text.
  void line(double x1, double y1, double x2, double y2, std::string_view css_class);
  void rect(double x, double y, double w, double h, std::string_view css_class, std::string_view title = "",
            std::string_view style = "");
  void circle(double cx, double cy, double r, std::string_view css_class, std::string_view title);
  void text(double x, double y, std::string_view s, std::string_view css_class, std::string_view anchor = "start",
            std::string_view title = "");
  // Lines of text, `line_px` apart, the first at `y`.
  void text_lines(double x, double y, const std::vector<std::string>& lines, double line_px, std::string_view css_class,
                  std::string_view anchor, std::string_view title);
  std::string finish();

 private:
  std::string out_;
};

// A base-10 logarithmic axis from whole decades `lo` to `hi` onto pixels [px_lo, px_hi].
struct LogAxis {
  double lo = 1, hi = 10;
  double px_lo = 0, px_hi = 1;
  // The decades around [min_v, max_v] (both > 0).
  static LogAxis around(double min_v, double max_v, double px_lo, double px_hi);
  double map(double v) const;
  std::vector<double> decades() const;  // 10^k for every k in [log lo, log hi]
};

// A linear axis from `lo` to `hi` onto pixels [px_lo, px_hi].
struct LinearAxis {
  double lo = 0, hi = 1;
  double px_lo = 0, px_hi = 1;
  double map(double v) const;
};

}  // namespace kernlens::report
