// A thin layer over SQLite. For readers of SQLite exports: opening a database from bytes in
// memory or from a file without ever writing to it, finding tables and columns by name
// (export schemas change between versions), and stepping through query results. For the run
// database (store/): a file opened for writing (WAL, busy timeout) or for reading only,
// statements with bound parameters, and a result's columns by position.
// SQLite's own messages are kept in errors; callers add which file or table they were at.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/common/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kernlens {

class SqliteStatement {
 public:
  SqliteStatement() = default;
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  // The next row: true with a row, false at the end. An error (a damaged file) is kept in
  // error() and ends the rows.
  bool step();
  const std::optional<std::string>& error() const { return error_; }

  bool is_null(int column) const;
  std::int64_t int64(int column) const;
  std::optional<std::int64_t> opt_int64(int column) const;
  // Columns [0, count) of the row as integers into values[0, count), NULL as 0 with bit c of the
  // result set (count at most 64): for readers of wide integer rows, one call into SQLite a
  // column where opt_int64 a column is a call of ours and one or two of SQLite's.
  std::uint64_t int64_columns(int count, std::int64_t* values) const;
  std::optional<double> opt_double(int column) const;
  std::string_view text(int column) const;  // empty for NULL; valid until the next step()

  // Parameters are 1-based, as SQLite counts. Text is copied (SQLITE_TRANSIENT).
  void bind(int parameter, std::int64_t value);
  void bind(int parameter, double value);
  void bind(int parameter, std::string_view value);
  void bind(int parameter, const std::optional<double>& value);         // NULL when absent
  void bind(int parameter, const std::optional<std::int64_t>& value);   // NULL when absent
  void bind_text_or_null(int parameter, std::string_view value);        // NULL when empty
  void bind_null(int parameter);
  void reset();
  // Steps to the end of a statement that returns no rows; an error carries SQLite's message.
  Status run();

  int column_count() const;
  std::string column_name(int column) const;
  enum class Type { kInteger, kFloat, kText, kBlob, kNull };
  Type type(int column) const;
  double float64(int column) const;
  // Whether the statement leaves the database as it is (sqlite3_stmt_readonly).
  bool read_only() const;

 private:
  friend class SqliteDb;
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::optional<std::string> error_;
};

class SqliteDb {
 public:
  SqliteDb() = default;
  SqliteDb(SqliteDb&& other) noexcept;
  SqliteDb& operator=(SqliteDb&& other) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb();

  // The database in `bytes`, which must outlive it (no copy is made). Errors carry SQLite's
  // message only; callers add the path.
  static Result<SqliteDb> open_bytes(std::string_view bytes);
  // The database file at `path`, read where it lies and never written: opened immutable (no
  // locks, no -shm file), so read-only storage is fine; or, when its write-ahead log holds
  // changes (sqlite_has_pending_wal), read-only through PATH-shm, with an error that says so
  // where that file cannot be had.
  static Result<SqliteDb> open_file(const std::string& path);
  // The database file at `path` for reading and writing, created when missing, with
  // `busy_timeout_ms` of waiting for another connection's lock.
  static Result<SqliteDb> open_writable(const std::string& path, int busy_timeout_ms);
  // The database file at `path` for reading only, taking the shared locks a live (WAL)
  // database needs while others write to it; never writes to it.
  static Result<SqliteDb> open_read_only(const std::string& path, int busy_timeout_ms);

  // Runs statements that return no rows (schema, pragmas, BEGIN/COMMIT).
  Status exec(const std::string& sql) const;
  // One statement: an error when `sql` holds more than one.
  Result<SqliteStatement> prepare_single(const std::string& sql) const;
  std::int64_t last_insert_rowid() const;

  Result<SqliteStatement> prepare(const std::string& sql) const;
  // Tables (not views) by exact name, read once from sqlite_master.
  Result<std::vector<std::string>> table_names() const;
  // A table's column names in their order (PRAGMA table_info).
  Result<std::vector<std::string>> columns(std::string_view table) const;
  std::string message() const;  // SQLite's last error message

  // Statements stepped from now on stop with an error ("interrupted") once `seconds` have
  // passed; 0 removes the limit.
  void set_time_limit(double seconds) const;
  bool past_time_limit() const;

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  static Result<SqliteDb> configured(sqlite3* db, int open_rc);
  sqlite3* db_ = nullptr;
  mutable std::unique_ptr<std::chrono::steady_clock::time_point> deadline_;  // set_time_limit
};

// An SQL identifier in double quotes (embedded quotes doubled).
std::string sql_quote(std::string_view identifier);

// Whether the database file at `path` has a write-ahead log PATH-wal that is not empty: part
// of its data is there, and only SQLite reading the file itself (not a copy of its bytes)
// sees it.
bool sqlite_has_pending_wal(const std::string& path);

// Whether `bytes` starts like an SQLite database file.
bool is_sqlite_header(std::string_view bytes);

// When the header (whose in-header size SQLite trusts) declares more bytes than `size`, the
// declared size: the file was cut short. nullopt when it fits or the header does not say.
std::optional<std::uint64_t> sqlite_declared_size_beyond(std::string_view header,
                                                         std::uint64_t size);

}  // namespace kernlens
