#include "kernlens/common/progress.h"

#include <unistd.h>

#include <cstdio>

namespace kernlens {

ProgressBar::ProgressBar(std::string label, std::uint64_t total, std::uint64_t min_total)
    : label_(std::move(label)),
      total_(total),
      enabled_(total >= min_total && total > 0 && isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(std::uint64_t done) {
  if (!enabled_ || finished_) return;
  int permille = static_cast<int>(done >= total_ ? 1000 : done * 1000 / total_);
  if (permille == last_permille_) return;
  last_permille_ = permille;
  constexpr int kWidth = 30;
  int filled = permille * kWidth / 1000;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "\r%s [%.*s%*s] %5.1f%%  %.1fs", label_.c_str(), filled,
               "##############################", kWidth - filled, "", permille / 10.0, secs);
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  std::fprintf(stderr, "\r\033[K");  // clear the line: the result follows
  std::fflush(stderr);
}

}  // namespace kernlens
