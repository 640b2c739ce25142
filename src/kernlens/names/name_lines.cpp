#include "kernlens/names/name_lines.h"

#include <algorithm>
#include <bit>

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

Status classify_name_lines(ChunkReader& in, const KernelClassifier& classifier,
                           const std::function<Status(std::string_view)>& write, std::size_t batch_bytes) {
  NameLineCache cache(classifier);
  std::string out;
  out.reserve(batch_bytes + 4096);
  std::string_view carry;
  while (true) {
    auto window = in.next(carry);
    if (!window) return window.error();
    std::string_view text = *window;
    const bool last = in.at_end();
    while (!text.empty()) {
      const std::size_t end = text.find('\n');
      if (end == std::string_view::npos && !last) break;  // the rest comes with the next window
      std::string_view name = text.substr(0, end);
      text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
      if (!name.empty() && name.back() == '\r') name.remove_suffix(1);
      if (name.find_first_not_of(" \t") == std::string_view::npos) continue;
      out += cache.line(name);
      if (out.size() >= batch_bytes) {
        if (Status s = write(out); !s) return s;
        out.clear();
      }
    }
    if (last) break;
    carry = text;
  }
  return out.empty() ? ok_status() : write(out);
}

}  // namespace kernlens::names
