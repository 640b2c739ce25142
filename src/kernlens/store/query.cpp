#include "kernlens/store/query.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernlens/common/escape.h"
#include "kernlens/common/text.h"

namespace kernlens::store {
namespace {


Cell cell(const SqliteStatement& stmt, int column) {
  switch (stmt.type(column)) {
    case SqliteStatement::Type::kInteger: return stmt.int64(column);
    case SqliteStatement::Type::kFloat: return stmt.float64(column);
    case SqliteStatement::Type::kNull: return std::monostate{};
    default: return std::string(stmt.text(column));
  }
}

// For people: whole numbers (nanoseconds) in full, large ones to 0.1, small ones to 6 digits.
std::string readable(double d) {
  if (std::abs(d) < 1e15 && d == std::floor(d)) return fmt::format("{:.0f}", d);
  if (std::abs(d) >= 1000 && std::abs(d) < 1e15) return fmt::format("{:.1f}", d);
  return fmt::format("{:.6g}", d);
}

// `precise`: shortest text that reads back to the same double; else readable().
std::string cell_text(const Cell& c, bool precise) {
  if (const auto* i = std::get_if<std::int64_t>(&c)) return fmt::format("{}", *i);
  if (const auto* d = std::get_if<double>(&c)) return precise ? fmt::format("{}", *d) : readable(*d);
  if (const auto* s = std::get_if<std::string>(&c)) return *s;
  return "";
}

nlohmann::ordered_json cell_json(const Cell& c) {
  if (const auto* i = std::get_if<std::int64_t>(&c)) return *i;
  if (const auto* d = std::get_if<double>(&c)) return *d;
  if (const auto* s = std::get_if<std::string>(&c)) return *s;
  return nullptr;
}

std::string text_table(const Table& t) {
  std::vector<std::size_t> width(t.columns.size());
  std::vector<std::vector<std::string>> shown;
  for (std::size_t c = 0; c < t.columns.size(); ++c) width[c] = t.columns[c].size();
  for (const auto& row : t.rows) {
    auto& out = shown.emplace_back();
    for (std::size_t c = 0; c < row.size(); ++c) {
      out.push_back(std::holds_alternative<std::monostate>(row[c]) ? "-" : escape_controls(cell_text(row[c], false)));
      width[c] = std::max(width[c], out.back().size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells, const std::vector<Cell>* row) {
    std::string s;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      bool number = row && (std::holds_alternative<std::int64_t>((*row)[c]) || std::holds_alternative<double>((*row)[c]));
      s += number ? fmt::format("{:>{}}", cells[c], width[c]) : fmt::format("{:<{}}", cells[c], width[c]);
      s += c + 1 < cells.size() ? "  " : "";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(t.columns, nullptr);
  for (std::size_t r = 0; r < t.rows.size(); ++r) out += line(shown[r], &t.rows[r]);
  return out + fmt::format("({} row{})\n", t.rows.size(), t.rows.size() == 1 ? "" : "s");
}

std::string csv_table(const Table& t) {
  std::string out;
  auto add_line = [&out](const auto& cells, auto text_of) {
    for (std::size_t c = 0; c < cells.size(); ++c) out += (c ? "," : "") + csv_field(text_of(cells[c]));
    out += "\r\n";
  };
  add_line(t.columns, [](const std::string& s) { return s; });
  for (const auto& row : t.rows) add_line(row, [](const Cell& c) { return cell_text(c, true); });
  return out;
}

nlohmann::ordered_json row_json(const Table& t, const std::vector<Cell>& row) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (std::size_t c = 0; c < row.size(); ++c) j[t.columns[c]] = cell_json(row[c]);
  return j;
}

constexpr std::array kViews = {
    View{"popularity", "v_kernel_popularity", "kernel families by how many runs and models use them, and their time"},
    View{"families", "v_family_performance", "SM%, DRAM%, L2 hit, occupancy and bottleneck mix per kernel family"},
    View{"op-classes", "v_op_class_performance", "the same per operation class (gemm, attention, ...)"},
    View{"signals", "v_signals", "weak spots: memory-bound with low L2 hit, GEMMs far from the roof, "
                                 "occupancy-limited kernels, launch-bound stages"},
    View{"signal-summary", "v_signal_summary", "the signals grouped by kernel family"},
    View{"class-scaling", "v_op_class_scaling",
         "per op class and model, batch, tokens: share of time, SOL%, FLOP/s, DRAM B/s (sweeps)"},
    View{"family-scaling", "v_family_scaling", "the same per kernel family"},
    View{"ranks", "v_ranks", "per rank of multi-rank runs: kernel time, communication, exposed, straggler"},
    View{"rank-stages", "v_rank_stages", "per rank and stage of multi-rank runs: kernel, wall and communication time"},
    View{"runs", "runs", "the ingested runs"},
};

constexpr std::array<std::string_view, 7> kExportTables = {"runs",   "run_tags", "devices",        "kernels",
                                                           "stages", "run_ranks", "run_rank_stages"};

}  // namespace

Result<Table> run_query(const SqliteDb& db, const std::string& sql, const QueryOptions& options) {
  auto stmt = db.prepare_single(sql);
  if (!stmt) return stmt.error();
  if (!stmt->read_only()) {
    return make_error("", 0, "db query is read-only: this statement would change the database");
  }
  Table t;
  for (int c = 0; c < stmt->column_count(); ++c) t.columns.push_back(stmt->column_name(c));
  db.set_time_limit(options.timeout_s);
  while (stmt->step()) {
    auto& row = t.rows.emplace_back();
    row.reserve(t.columns.size());
    for (int c = 0; c < stmt->column_count(); ++c) row.push_back(cell(*stmt, c));
  }
  const bool timed_out = db.past_time_limit();
  db.set_time_limit(0);
  if (stmt->error() && timed_out) {
    return make_error("", 0, fmt::format("the query ran longer than {:g} s and was stopped (db query --timeout "
                                         "SEC sets the limit; 0: none)", options.timeout_s));
  }
  if (stmt->error()) return make_error("", 0, *stmt->error());
  return t;
}

std::optional<TableFormat> parse_table_format(std::string_view name) {
  if (name == "text") return TableFormat::kText;
  if (name == "csv") return TableFormat::kCsv;
  if (name == "json") return TableFormat::kJson;
  if (name == "jsonl") return TableFormat::kJsonl;
  return std::nullopt;
}

std::string format_table(const Table& table, TableFormat format) {
  switch (format) {
    case TableFormat::kText: return text_table(table);
    case TableFormat::kCsv: return csv_table(table);
    case TableFormat::kJson: {
      auto rows = nlohmann::ordered_json::array();
      for (const auto& row : table.rows) rows.push_back(row_json(table, row));
      return rows.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    }
    case TableFormat::kJsonl: {
      std::string out;
      for (const auto& row : table.rows) {
        out += row_json(table, row).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
      }
      return out;
    }
  }
  return "";
}

std::span<const View> builtin_views() {
  return kViews;
}

std::span<const std::string_view> export_tables() {
  return kExportTables;
}

}  // namespace kernlens::store
