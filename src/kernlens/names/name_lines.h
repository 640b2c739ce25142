// `kernlens names` as a library step: kernel names one a line in, one classified line out,
// streamed through bounded buffers, so that memory stays the same whatever the input's size.
// A bounded cache remembers the lines of names seen recently: a list of launches repeats a
// few hundred names millions of times.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/common/chunk_reader.h"
#include "kernlens/common/error.h"
#include "kernlens/names/classify.h"

namespace kernlens::names {

// Appends the classified line of one name to `out`: tab-separated name, base_name, library,
// op_class, rule, with control characters (tabs included) escaped (common/text.h), ending in
// a line break.
void append_classified_line(std::string& out, std::string_view name, const Classification& c);

// Remembers the classified lines of recent names in a fixed table of `slots` (a power of two)
// indexed by the name's hash: a name takes the place of the one in its slot, whose strings'
// room it reuses. A profile's few hundred names stay; a stream of distinct names costs a hash
// and a compare each, no allocation once the slots have grown, and memory never grows with
// the input.
class NameLineCache {
 public:
  explicit NameLineCache(const KernelClassifier& classifier, std::size_t slots = 1 << 13);
  // The classified line of `name`.
  std::string_view line(std::string_view name);
  std::size_t hits() const { return hits_; }

 private:
  struct Slot {
    std::string name, line;
    bool used = false;
  };
  const KernelClassifier& classifier_;
  std::vector<Slot> slots_;
  std::size_t hits_ = 0;
};

// Reads names from `in` window by window (a line break ends a name; "\r\n" too; blank lines
// are skipped) and hands the classified lines to `write`, in input order, in batches of about
// `batch_bytes`. Each window's lines are classified on up to `threads` threads, each with a
// cache of its own; the output is the same whatever the number.
// Errors: from reading, from `write`, a name longer than the reader's carry.
Status classify_name_lines(ChunkReader& in, const KernelClassifier& classifier,
                           const std::function<Status(std::string_view)>& write,
                           std::size_t batch_bytes = 1 << 20, unsigned threads = 1);

}  // namespace kernlens::names
