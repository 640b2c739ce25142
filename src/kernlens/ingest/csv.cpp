#include "kernlens/ingest/csv.h"

#include <cstring>

namespace kernlens::ingest {

CsvScanner::CsvScanner(std::string_view data, std::int64_t first_line)
    : data_(data), line_(first_line) {}

std::string_view strip_bom(std::string_view data) {
  if (data.size() >= 3 && data.substr(0, 3) == "\xEF\xBB\xBF") data.remove_prefix(3);
  return data;
}

bool is_ncu_console_line(std::string_view line) {
  // "==" WORD "==" where WORD is upper-case letters: ==PROF==, ==WARNING==, ==ERROR==.
  if (line.size() < 5 || line[0] != '=' || line[1] != '=') return false;
  std::size_t i = 2;
  while (i < line.size() && line[i] >= 'A' && line[i] <= 'Z') ++i;
  return i > 2 && i + 1 < line.size() && line[i] == '=' && line[i + 1] == '=';
}

std::string_view CsvScanner::peek_line() const {
  std::string_view rest = data_.substr(pos_);
  std::size_t nl = rest.find('\n');
  std::string_view line = rest.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

void CsvScanner::skip_line() {
  std::size_t nl = data_.find('\n', pos_);
  pos_ = nl == std::string_view::npos ? data_.size() : nl + 1;
  ++line_;
}

bool CsvScanner::next(CsvRecord& rec) {
  rec.fields.clear();
  owned_.clear();
  if (pos_ >= data_.size()) return false;
  rec.line = line_;
  rec.closed = true;
  const char* const begin = data_.data();
  const char* const end = begin + data_.size();
  const char* p = begin + pos_;

  while (true) {
    std::string_view field;
    if (p < end && *p == '"') {
      // Quoted field: one tight loop finds the closing quote and counts line breaks.
      const char* q = p + 1;
      bool doubled = false;
      while (true) {
        while (q < end && *q != '"') {
          if (*q == '\n') ++line_;
          ++q;
        }
        if (q + 1 < end && q[1] == '"') {
          doubled = true;
          q += 2;
          continue;
        }
        break;
      }
      if (q >= end) {  // the data ended inside the quotes: a truncated record
        rec.fields.emplace_back(p + 1, static_cast<std::size_t>(end - p - 1));
        rec.closed = false;
        pos_ = data_.size();
        return true;
      }
      field = std::string_view(p + 1, static_cast<std::size_t>(q - p - 1));
      p = q + 1;
      if (doubled || (p < end && *p != ',' && *p != '\n' && *p != '\r')) {
        std::string& copy = owned_.emplace_back();
        copy.reserve(field.size());
        for (std::size_t i = 0; i < field.size(); ++i) {
          copy += field[i];
          if (field[i] == '"' && i + 1 < field.size() && field[i + 1] == '"') ++i;
        }
        // Lenient: text after a closing quote belongs to the field ("ab"c -> ab"c).
        while (p < end && *p != ',' && *p != '\n' && *p != '\r') copy += *p++;
        field = copy;
      }
    } else {
      const char* q = p;
      while (q < end && *q != ',' && *q != '\n' && *q != '\r') ++q;
      field = std::string_view(p, static_cast<std::size_t>(q - p));
      p = q;
    }
    rec.fields.push_back(field);

    if (p >= end) {
      pos_ = data_.size();
      return true;
    }
    if (*p == ',') {
      ++p;
      continue;
    }
    // A line break ends the record: "\n", "\r\n" or a lone "\r".
    if (*p == '\r') ++p;
    if (p < end && *p == '\n') ++p;
    ++line_;
    pos_ = static_cast<std::size_t>(p - begin);
    return true;
  }
}

}  // namespace kernlens::ingest
