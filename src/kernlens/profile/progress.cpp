#include "kernlens/profile/progress.h"

#include <array>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "kernlens/common/ascii.h"
#include "kernlens/names/mangled.h"

namespace kernlens::profile {
namespace {

constexpr std::array<std::string_view, 3> kMarkers = {"==PROF==", "==WARNING==", "==ERROR=="};

std::string_view trim_line_ends(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\r' || s.front() == '\n'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

template <class T>
std::optional<T> leading_number(std::string_view s) {
  T value{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  return value;
}

// The next marker at or after `from`: its position and index in kMarkers.
std::pair<std::size_t, std::size_t> next_marker(std::string_view line, std::size_t from) {
  std::size_t best = std::string_view::npos, which = 0;
  for (std::size_t m = 0; m < kMarkers.size(); ++m) {
    std::size_t at = line.find(kMarkers[m], from);
    if (at < best) best = at, which = m;
  }
  return {best, which};
}

// With --kernel-id, ncu prints the matched kernel as its id, "CONTEXT:STREAM:NAME:INVOCATION"
// ("1:7:kA:2", ncu 2025.3.1): the name alone, else `printed` unchanged.
std::string_view name_of_kernel_id(std::string_view printed) {
  auto digits_then_colon = [](std::string_view s, std::size_t& at) {
    std::size_t start = at;
    while (at < s.size() && is_ascii_digit(s[at])) ++at;
    if (at == start || at >= s.size() || s[at] != ':') return false;
    ++at;
    return true;
  };
  std::size_t at = 0;
  if (!digits_then_colon(printed, at) || !digits_then_colon(printed, at)) return printed;
  std::size_t last = printed.rfind(':');
  if (last < at || last + 1 == printed.size()) return printed;
  for (std::size_t i = last + 1; i < printed.size(); ++i) {
    if (printed[i] < '0' || printed[i] > '9') return printed;
  }
  return printed.substr(at, last - at);
}

// `Profiling "NAME" - N: 0%....50%....100% - P passes`, or `Profiling "ID": 0%....` under
// --kernel-id. The name may hold quotes, so it runs to the last `" - ` before the launch
// number (or the last `": `).
NcuEvent parse_profiling(std::string_view text) {
  NcuEvent e{NcuEventKind::kProfiling, {}, {}, {}, {}, std::string(text)};
  std::string_view rest = text.substr(std::string_view("Profiling \"").size());
  if (std::size_t name_end = rest.rfind("\" - "); name_end != std::string_view::npos &&
                                                   leading_number<std::int64_t>(rest.substr(name_end + 4))) {
    e.kernel = std::string(rest.substr(0, name_end));
    rest.remove_prefix(name_end + 4);
    e.launch = leading_number<std::int64_t>(rest);
  } else if (name_end = rest.rfind("\": "); name_end != std::string_view::npos) {
    e.kernel = std::string(name_of_kernel_id(rest.substr(0, name_end)));
    rest.remove_prefix(name_end + 3);
  } else {
    return e;
  }
  if (std::size_t passes_at = rest.rfind("% - "); passes_at != std::string_view::npos) {
    std::string_view passes = rest.substr(passes_at + 4);
    if (passes.ends_with(" passes") || passes.ends_with(" pass"))
      e.passes = leading_number<int>(passes);
  }
  return e;
}

NcuEvent parse_prof(std::string_view text) {
  auto with_pid = [&](NcuEventKind kind, std::string_view prefix) {
    NcuEvent e{kind,
               {},
               {},
               {},
               leading_number<std::int64_t>(text.substr(prefix.size())),
               std::string(text)};
    return e;
  };
  if (text.starts_with("Profiling \"")) return parse_profiling(text);
  if (text.starts_with("Connected to process ")) {
    return with_pid(NcuEventKind::kConnected, "Connected to process ");
  }
  if (text.starts_with("Disconnected from process ")) {
    return with_pid(NcuEventKind::kDisconnected, "Disconnected from process ");
  }
  if (text.starts_with("Report: ")) {
    return NcuEvent{NcuEventKind::kReport, {}, {}, {}, {}, std::string(text.substr(8))};
  }
  return NcuEvent{NcuEventKind::kOtherProf, {}, {}, {}, {}, std::string(text)};
}

NcuEvent parse_segment(std::size_t marker, std::string_view text) {
  if (marker == 0) return parse_prof(text);
  if (marker == 2) return NcuEvent{NcuEventKind::kError, {}, {}, {}, {}, std::string(text)};
  auto kind = text.starts_with("No kernels were profiled") ? NcuEventKind::kNoKernelsProfiled
                                                           : NcuEventKind::kWarning;
  return NcuEvent{kind, {}, {}, {}, {}, std::string(text)};
}

}  // namespace

std::vector<NcuEvent> parse_ncu_line(std::string_view line) {
  std::vector<NcuEvent> events;
  auto [at, which] = next_marker(line, 0);
  while (at != std::string_view::npos) {
    std::size_t body = at + kMarkers[which].size();
    auto [next, next_which] = next_marker(line, body);
    std::string_view text = trim_line_ends(
        line.substr(body, next == std::string_view::npos ? std::string_view::npos : next - body));
    events.push_back(parse_segment(which, text));
    at = next;
    which = next_which;
  }
  return events;
}

std::string format_elapsed(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  auto total = static_cast<long long>(std::floor(seconds));
  if (total < 3600) return fmt::format("{}:{:02}", total / 60, total % 60);
  return fmt::format("{}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60);
}

std::string DeepProgress::render(double elapsed_s) {
  std::string line =
      fmt::format("ncu: {}/{} kernels, {}", done_, planned_, format_elapsed(elapsed_s));
  if (!current_.empty()) line += ": " + current_;
  return line;
}

std::string DeepProgress::on_event(const NcuEvent& event, double elapsed_s) {
  if (event.kind != NcuEventKind::kProfiling) return {};
  // ncu prints the names its filter matched, mangled here: the base name reads better.
  current_ = names::kernel_base_name(event.kernel);
  if (event.passes) ++done_;
  if (!tty_) return event.passes ? render(elapsed_s) + "\n" : std::string();
  std::string line = render(elapsed_s);
  std::size_t width = line.size();
  if (width < last_width_) line.append(last_width_ - width, ' ');
  last_width_ = width;
  return "\r" + line;
}

std::string DeepProgress::finish(double elapsed_s, bool ended_early) {
  current_.clear();
  const char* how = done_ == 0          ? " (nothing profiled)"
                    : ended_early       ? " (stopped)"
                    : done_ >= planned_ ? " (done)"
                                        : " (short of the plan)";
  std::string line = render(elapsed_s) + how;
  if (!tty_) return line + "\n";
  std::size_t width = line.size();
  if (width < last_width_) line.append(last_width_ - width, ' ');
  return "\r" + line + "\n";
}

}  // namespace kernlens::profile
