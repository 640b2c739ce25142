// A progress bar on stderr for long reads, shown only when stderr is a terminal and the
// work is big enough to be worth it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace kernlens {

class ProgressBar {
 public:
  // `label` names the work; `total` is in the same unit as update(). Shows nothing when
  // stderr is not a terminal or `total` is below `min_total`.
  ProgressBar(std::string label, std::uint64_t total, std::uint64_t min_total = 64ull << 20);
  ~ProgressBar();
  void update(std::uint64_t done);
  void finish();

 private:
  std::string label_;
  std::uint64_t total_;
  bool enabled_;
  bool finished_ = false;
  int last_permille_ = -1;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kernlens
