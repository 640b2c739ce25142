// A stage as the user writes it on the command line: "[DOMAIN@]A/B/C", the push/pop ranges
// from the outermost, or "[DOMAIN@]NAME" for a start/end range; '\' before a literal '@',
// '/' or '\'. Split into its domain and unescaped range names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernlens::load {

struct NvtxPath {
  std::string domain;               // empty: the default domain
  std::vector<std::string> ranges;  // unescaped; an empty name is kept for the caller to reject
};

// `nested`: '/' separates nested push/pop ranges, and one trailing '/' (ncu's mark of a
// push/pop range, "LLM@prefill/") is dropped; otherwise the rest is one name.
NvtxPath parse_nvtx_path(std::string_view user, bool nested);

}  // namespace kernlens::load
