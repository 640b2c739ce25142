#include "kernlens/names/name_lines.h"

#include <algorithm>
#include <bit>

#include "kernlens/common/parallel_chunks.h"
#include "kernlens/common/text.h"

namespace kernlens::names {

namespace {

// Appends `s` as escape_controls shows it, copying it whole when it has nothing to escape (no
// C0 control, DEL or C1 lead byte 0xC2): names almost never have.
void append_shown(std::string& out, std::string_view s) {
  bool escape = false;  // no early exit: the compiler makes SIMD of the loop
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    escape |= (c < 0x20) | (c == 0x7F) | (c == 0xC2);
  }
  if (escape) {
    out += escape_controls(s);
  } else {
    out += s;
  }
}

}  // namespace

void append_classified_line(std::string& out, std::string_view name, const Classification& c) {
  append_shown(out, name);
  out += '\t';
  append_shown(out, c.base_name);
  for (std::string_view field : {to_string(c.library), to_string(c.op_class), c.rule}) {
    out += '\t';
    out += field;
  }
  out += '\n';
}

NameLineCache::NameLineCache(const KernelClassifier& classifier, std::size_t slots)
    : classifier_(classifier), slots_(std::bit_ceil(std::max<std::size_t>(slots, 1))) {}

std::string_view NameLineCache::line(std::string_view name) {
  Slot& slot = slots_[std::hash<std::string_view>{}(name) & (slots_.size() - 1)];
  if (slot.used && slot.name == name) {
    ++hits_;
    return slot.line;
  }
  slot.used = true;
  slot.name.assign(name);
  slot.line.clear();
  append_classified_line(slot.line, name, classifier_.classify(name));
  return slot.line;
}

namespace {

// Appends the classified line of every name in `text` (whole lines; a last one may lack its
// break) to `out`: "\r\n" ends a line too, blank lines are skipped. After each line,
// `after_line()` (a Status) may hand `out` on.
template <typename AfterLine>
Status classify_lines(std::string_view text, NameLineCache& cache, std::string& out, AfterLine after_line) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view name = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!name.empty() && name.back() == '\r') name.remove_suffix(1);
    if (name.find_first_not_of(" \t") == std::string_view::npos) continue;
    out += cache.line(name);
    if (Status s = after_line(); !s) return s;
  }
  return ok_status();
}

// `text` cut after line breaks into up to `parts` pieces of about equal size, none smaller
// than `min_bytes` (but the last).
std::vector<std::string_view> split_lines(std::string_view text, std::size_t parts, std::size_t min_bytes) {
  std::vector<std::string_view> out;
  const std::size_t share = std::max(min_bytes, text.size() / std::max<std::size_t>(parts, 1) + 1);
  while (text.size() > share && out.size() + 1 < parts) {
    const std::size_t cut = text.find('\n', share);
    if (cut == std::string_view::npos) break;
    out.push_back(text.substr(0, cut + 1));
    text.remove_prefix(cut + 1);
  }
  out.push_back(text);
  return out;
}

// A thread is worth its start for this much text (a few hundred names).
constexpr std::size_t kMinPartBytes = 64 << 10;

}  // namespace

Status classify_name_lines(ChunkReader& in, const KernelClassifier& classifier,
                           const std::function<Status(std::string_view)>& write, std::size_t batch_bytes,
                           unsigned threads) {
  threads = std::max(threads, 1u);
  std::vector<NameLineCache> caches;  // one a thread: a cache is not shared
  for (unsigned t = 0; t < threads; ++t) caches.emplace_back(classifier);
  std::vector<std::string> part_out(threads);
  std::string out;
  out.reserve(batch_bytes + 4096);
  std::string_view carry;
  while (true) {
    auto window = in.next(carry);
    if (!window) return window.error();
    const std::string_view text = *window;
    const bool last = in.at_end();
    // The window's whole lines: up to its last line break, or all of it at the end.
    const std::size_t last_break = text.rfind('\n');
    const std::size_t whole = last ? text.size() : last_break == std::string_view::npos ? 0 : last_break + 1;
    auto flush = [&]() -> Status {
      if (out.size() < batch_bytes) return ok_status();
      Status s = write(out);
      out.clear();
      return s;
    };
    const auto parts = split_lines(text.substr(0, whole), threads, kMinPartBytes);
    if (parts.size() == 1) {
      if (Status s = classify_lines(parts[0], caches[0], out, flush); !s) return s;
    } else {
      run_parallel(parts.size(), [&](std::size_t p) {
        (void)classify_lines(parts[p], caches[p], part_out[p], [] { return ok_status(); });
      });
      for (std::size_t p = 0; p < parts.size(); ++p) {
        out += part_out[p];
        part_out[p].clear();
      }
      if (Status s = flush(); !s) return s;
    }
    if (last) break;
    carry = text.substr(whole);
  }
  return out.empty() ? ok_status() : write(out);
}

}  // namespace kernlens::names
