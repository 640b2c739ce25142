// Read-only SQL over the run database, and its results as text, CSV, JSON or JSON lines.
//
//   auto db = open_for_reading(path);                 // database.h
//   auto table = run_query(*db, "SELECT * FROM v_kernel_popularity LIMIT 10");
//   std::string out = format_table(*table, TableFormat::kText);
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/common/sqlite_db.h"

namespace kernlens::store {

using Cell = std::variant<std::monostate, std::int64_t, double, std::string>;  // monostate: NULL

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
};

struct QueryOptions {
  double timeout_s = 0;  // stop a statement that runs longer; 0: no limit
};

// One statement (comments after it are fine). Errors: SQL errors, more than one statement,
// a statement that would write (refused before it runs; the connection is read-only
// besides), and one that ran past the timeout.
Result<Table> run_query(const SqliteDb& db, const std::string& sql, const QueryOptions& options = {});

enum class TableFormat { kText, kCsv, kJson, kJsonl };
std::optional<TableFormat> parse_table_format(std::string_view name);
// kText: aligned columns, numbers rounded for people; the others: full precision.
std::string format_table(const Table& table, TableFormat format);

// The built-in views: short name ("popularity") and the view ("v_kernel_popularity").
struct View {
  std::string_view name;
  std::string_view view;
  std::string_view what;
};
std::span<const View> builtin_views();

// The tables `db export` writes, one file each.
std::span<const std::string_view> export_tables();

}  // namespace kernlens::store
