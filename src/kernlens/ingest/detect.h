// Content-based format detection: the file's bytes decide, never its extension.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kernlens/ingest/reader.h"

namespace kernlens::ingest {

struct FormatInfo {
  std::string_view id;           // stable id used in JSON output ("ncu-raw-csv")
  std::string_view description;  // for people ("Nsight Compute raw page CSV")
  ReadFn read;
  ReadFileFn read_file = nullptr;  // streams large plain files, when the format can
  bool read_file_inflates = false;  // read_file also streams gzip files, inflating as it goes
};

// Every format kernlens reads, in detection order.
std::span<const FormatInfo> formats();

struct Detection {
  const FormatInfo* format = nullptr;  // null when unrecognised
  std::string why;                     // when unrecognised: what the content looked like
  std::int64_t line = 0;               // the line `why` is about, when there is one
};

Detection detect_format(std::string_view bytes);

}  // namespace kernlens::ingest
