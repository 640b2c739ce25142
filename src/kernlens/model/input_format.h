// The formats a profile's inputs come in, as one enum (Perfetto's util/trace_type.h is the
// model). Which bytes are which format, what each is called for people and how it is read
// are the entries of ingest/registry.h; a new format is a value here and an entry there.
#pragma once

#include <cstdint>
#include <string_view>

namespace kernlens::model {

enum class InputFormat : std::uint8_t {
  kUnknown,
  kNcuRawCsv,
  kNcuDetailsCsv,
  kNcuSummaryCsv,
  kNsysSqlite,
  kNsysStatsCsv,
  kPytorchTrace,
  kKltrace,
  kRunDirectory,  // a run directory of `kernlens profile`: the exports read from it follow it
};

// The stable id outputs and the database use ("ncu-raw-csv"); empty for kUnknown.
std::string_view format_id(InputFormat format);

}  // namespace kernlens::model
