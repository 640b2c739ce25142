#include "kernlens/ingest/csv/header.h"

namespace kernlens::ingest {

std::optional<HeaderLocation> find_csv_header(std::string_view data, std::string_view marker,
                                              const std::function<bool(const CsvRecord&)>& is_header) {
  std::string_view body = strip_bom(data);
  const std::size_t bom = data.size() - body.size();
  CsvScanner scanner(body);
  CsvRecord rec;
  while (!scanner.at_end()) {
    std::size_t offset = scanner.offset();
    std::int64_t line = scanner.line();
    if (scanner.peek_line().find(marker) == std::string_view::npos) {
      scanner.skip_line();
      continue;
    }
    if (!scanner.next(rec)) break;
    if (is_header(rec)) return HeaderLocation{offset + bom, line};
  }
  return std::nullopt;
}

ColumnMap::ColumnMap(const std::vector<std::string_view>& header) {
  names_.reserve(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) {
    names_.emplace_back(header[i]);
    index_.emplace(names_.back(), i);  // the first of duplicate names wins
  }
}

std::optional<std::size_t> ColumnMap::find(std::string_view name) const {
  if (auto it = index_.find(std::string(name)); it != index_.end()) return it->second;
  return std::nullopt;
}

std::optional<std::size_t> ColumnMap::find_prefix(std::string_view prefix) const {
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (std::string_view(names_[i]).substr(0, prefix.size()) == prefix) return i;
  }
  return std::nullopt;
}

}  // namespace kernlens::ingest
