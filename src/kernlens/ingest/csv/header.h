// Pieces of CSV exports that are not one tool's: finding the header row among other lines
// (console output, a preamble), columns by name, and blank records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernlens/ingest/csv/scanner.h"

namespace kernlens::ingest {

struct HeaderLocation {
  std::size_t offset = 0;  // byte offset of the header line (after any BOM)
  std::int64_t line = 1;
};

// The first line that `is_header` accepts as a CSV record. Only lines whose text contains
// `marker` are parsed, so that long foreign lines cost a search, not a parse.
std::optional<HeaderLocation> find_csv_header(std::string_view data, std::string_view marker,
                                              const std::function<bool(const CsvRecord&)>& is_header);

class ColumnMap {
 public:
  explicit ColumnMap(const std::vector<std::string_view>& header);
  std::optional<std::size_t> find(std::string_view name) const;
  std::optional<std::size_t> find_prefix(std::string_view prefix) const;
  std::size_t size() const { return names_.size(); }
  const std::string& name(std::size_t i) const { return names_[i]; }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::size_t> index_;
};

// True for a record that is an empty line.
inline bool is_blank_record(const CsvRecord& rec) {
  return rec.fields.size() == 1 && rec.fields[0].empty();
}

}  // namespace kernlens::ingest
