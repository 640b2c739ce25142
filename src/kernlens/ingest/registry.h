// Every format kernlens reads, one entry each: its id, how its bytes are recognised, what it is
// called and what reads it (Perfetto's trace_reader_registry.h with util/trace_type.h is the
// model). The file's content decides the format, never its name. A new format is an id in
// model/input_format.h, its reader in a folder of its family, and one entry in kFormats
// (registry.cpp); nothing else branches on formats. docs/architecture.md has the steps.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kernlens/ingest/reader.h"
#include "kernlens/model/input_format.h"

namespace kernlens::ingest {

// The tool a format comes from: the error for an unknown file lists what to give family by
// family.
enum class FormatFamily : std::uint8_t { kNcu, kNsys, kPytorch, kKltrace };

struct FormatEntry {
  model::InputFormat id;
  FormatFamily family;
  std::string_view description;  // for people: "Nsight Compute raw page CSV"
  std::string_view expected;     // what to give, in the error for an unknown file (a family may share one)
  std::string_view produce;      // how to make it, for --help: "ncu --import R.ncu-rep --page raw --csv"
  // A text format is tried only once no other format, nor its near miss, matched and the bytes
  // are not binary.
  bool text;
  bool (*detect)(std::string_view bytes);           // these bytes (a file's start) are this format
  std::optional<NearMiss> (*near_miss)(std::string_view bytes) = nullptr;  // almost this format
  ReadFn read;
  ReadFileFn read_file = nullptr;   // streams large plain files, when the format can
  bool read_file_inflates = false;  // read_file also streams gzip files, inflating as it goes
};

// Every entry, in detection order.
std::span<const FormatEntry> formats();
const FormatEntry* find_format(model::InputFormat id);

struct Detection {
  const FormatEntry* format = nullptr;  // null when unrecognised
  std::string why;                      // when unrecognised: what the content looked like
  std::int64_t line = 0;                // the line `why` is about, when there is one
};

// The format of `bytes` (a whole file, or its first MiB): the first entry that detects it.
Detection guess_format(std::string_view bytes);

// "an Nsight Compute CSV export (...), ..., or a kernlens tracer trace (.kltrace)": what every
// entry expects, family by family.
std::string expected_formats();

// For --help: each format, family by family, a line "  DESCRIPTION: HOW TO MAKE IT".
std::string formats_help();

}  // namespace kernlens::ingest
