#include "kernlens/ingest/nsys/sqlite_schema.h"

#include "kernlens/common/parallel_chunks.h"
#include "kernlens/common/step_times.h"

namespace kernlens::ingest::nsys {

unsigned reader_threads(const ReadContext& ctx, std::uint64_t file_bytes) {
  const ReadOptions defaults;
  const ReadOptions& options = ctx.options ? *ctx.options : defaults;
  const std::uint64_t threads = options.thread_count();
  const std::uint64_t parts = file_bytes / std::max<std::size_t>(1, options.min_part_bytes);
  return static_cast<unsigned>(std::clamp<std::uint64_t>(parts, 1, threads));
}

Status Schema::load() {
  auto names = db_.table_names();
  if (!names) return unreadable(names.error().message);
  tables_ = std::move(*names);
  read_version();
  return ok_status();
}

bool Schema::has_any_table_starting(std::string_view prefix) const {
  return std::any_of(tables_.begin(), tables_.end(), [&](const std::string& t) {
    return std::string_view(t).substr(0, prefix.size()) == prefix;
  });
}

bool Schema::has_column(std::string_view table, std::string_view column) {
  const auto* cols = columns(table);
  return cols && std::find(cols->begin(), cols->end(), column) != cols->end();
}

Result<SqliteStatement> Schema::select(std::string_view table, std::span<const Column> columns,
                                       std::string_view where) {
  auto sql = select_sql(table, columns, where);
  if (!sql) return sql.error();
  auto stmt = db_.prepare(*sql);
  if (!stmt) return unreadable("table " + std::string(table) + ": " + stmt.error().message);
  return stmt;
}

Result<std::string> Schema::select_sql(std::string_view table, std::span<const Column> columns,
                                       std::string_view where) {
  std::string sql = "SELECT ";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) sql += ", ";
    if (has_column(table, columns[i].name)) {
      sql += sql_quote(columns[i].name);
    } else if (columns[i].required) {
      return ctx_.error(0, "table " + std::string(table) + " has no column '" +
                               std::string(columns[i].name) + "'" + version_note());
    } else {
      sql += "NULL";
    }
  }
  sql += " FROM " + sql_quote(table);
  if (!where.empty()) sql += " WHERE " + std::string(where);
  return sql;
}

Result<std::string> Schema::select_range_sql(std::string_view table,
                                             std::span<const Column> columns) {
  auto sql = select_sql(table, columns);
  if (!sql) return sql;
  sql->insert(sql->find(" FROM "), ", rowid");  // the columns are quoted: the first FROM is SQL's
  *sql += " WHERE rowid >= ?1";
  return sql;
}

std::optional<std::uint64_t> rows_of_one_scan(const SqliteDb& db, std::string_view table) {
  auto stmt = db.prepare("SELECT count(*) FROM " + sql_quote(table));
  if (!stmt || !stmt->step() || stmt->int64(0) < 0) return std::nullopt;
  const auto rows = static_cast<std::uint64_t>(stmt->int64(0));
  if (stmt->step() || stmt->error()) return std::nullopt;
  return rows;
}

RowCount::RowCount(DbSource source, std::string table, CpuTally* cpu)
    : rows_(std::async(std::launch::async,
                       [source = std::move(source), table = std::move(table), cpu]() -> std::optional<std::uint64_t> {
                         const CpuTally::Charge charge(cpu);
                         if (auto db = source.open_for_a_scan()) return rows_of_one_scan(*db, table);
                         return std::nullopt;
                       })) {}

Status Schema::finished(const SqliteStatement& stmt, std::string_view table) const {
  if (stmt.error()) return unreadable("table " + std::string(table) + ": " + *stmt.error());
  return ok_status();
}

Error Schema::unreadable(const std::string& what) const {
  return ctx_.error(0, "cannot read the SQLite database (" + what +
                           "): the file is damaged, truncated or not an SQLite database");
}

std::size_t Schema::row_estimate(std::string_view table, std::uint64_t file_bytes) const {
  constexpr std::uint64_t kMinRowBytes = 16;
  if (!has(table)) return 0;
  auto stmt = db_.prepare("SELECT max(rowid) FROM " + sql_quote(table));
  if (!stmt || !stmt->step() || stmt->int64(0) <= 0) return 0;
  return static_cast<std::size_t>(
      std::min(static_cast<std::uint64_t>(stmt->int64(0)), file_bytes / kMinRowBytes));
}

std::vector<std::pair<std::int64_t, std::int64_t>> Schema::rowid_ranges(
    std::string_view table, std::uint64_t parts, std::uint64_t file_bytes,
    std::size_t slot_bytes) const {
  if (parts < 2 || !has(table)) return {};
  return nsys::rowid_ranges(db_, table, parts, row_estimate(table, file_bytes), file_bytes, slot_bytes);
}

std::vector<std::pair<std::int64_t, std::int64_t>> rowid_ranges(const SqliteDb& db, std::string_view table,
                                                                std::uint64_t parts, std::uint64_t max_rows,
                                                                std::uint64_t file_bytes, std::size_t slot_bytes) {
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  if (parts < 2) return ranges;
  // Two subqueries: SQLite looks up a lone min() or max() of the rowid at one end of the
  // b-tree, but scans the whole table for both in one SELECT.
  const std::string quoted = sql_quote(table);
  auto stmt = db.prepare("SELECT (SELECT min(rowid) FROM " + quoted + "), (SELECT max(rowid) FROM " + quoted + ")");
  if (!stmt || !stmt->step() || stmt->is_null(0) || stmt->is_null(1)) return ranges;
  const std::int64_t lo = stmt->int64(0), hi = stmt->int64(1);
  if (hi <= lo) return ranges;
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
  if (span > max_rows) return ranges;
  if (span * slot_bytes > file_bytes) {  // count(*) reads the table's pages, not its rows
    auto count = db.prepare("SELECT count(*) FROM " + quoted);
    if (!count || !count->step()) return ranges;
    const auto rows = static_cast<std::uint64_t>(std::max<std::int64_t>(count->int64(0), 0));
    if (span > rows + rows / 8 + 1024) return ranges;
  }
  parts = std::min(parts, span);
  for (std::uint64_t i = 0; i < parts; ++i) {
    ranges.emplace_back(lo + static_cast<std::int64_t>(span * i / parts),
                        lo + static_cast<std::int64_t>(span * (i + 1) / parts));
  }
  return ranges;
}

const std::vector<std::string>* Schema::columns(std::string_view table) {
  std::string key(table);
  auto it = columns_.find(key);
  if (it == columns_.end()) {
    auto cols = db_.columns(table);
    it = columns_.emplace(key, cols ? std::move(*cols) : std::vector<std::string>{}).first;
  }
  return &it->second;
}

void Schema::read_version() {
  for (auto table : kMetadataTables) {
    if (!has(table)) continue;
    auto stmt = db_.prepare("SELECT value FROM " + sql_quote(table) +
                            " WHERE name = 'EXPORT_SCHEMA_VERSION'");
    if (stmt && stmt->step()) version_ = std::string(stmt->text(0));
    return;
  }
}

Status Strings::open(Schema& schema) {
  static constexpr std::array kColumns = {Column{"id", true}, Column{"value", true}};
  auto stmt = schema.select(kStrings, kColumns, "id = ?");
  if (!stmt) return stmt.error();
  lookup_ = std::move(*stmt);
  return ok_status();
}

const std::optional<std::string>& Strings::get(std::int64_t id) {
  auto [it, is_new] = cache_.try_emplace(id);
  if (is_new) {
    lookup_.reset();
    lookup_.bind(1, id);
    if (lookup_.step()) it->second = std::string(lookup_.text(1));
  }
  return it->second;
}

}  // namespace kernlens::ingest::nsys
