#include "kernlens/common/sqlite_db.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <utility>

#include "kernlens/common/text.h"

namespace kernlens {

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), error_(std::move(other.error_)) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    error_ = std::move(other.error_);
  }
  return *this;
}

SqliteStatement::~SqliteStatement() {
  sqlite3_finalize(stmt_);
}

bool SqliteStatement::step() {
  if (error_) return false;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) error_ = sqlite3_errmsg(db_);
  return false;
}

bool SqliteStatement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t SqliteStatement::int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

std::optional<std::int64_t> SqliteStatement::opt_int64(int column) const {
  // NULL reads as 0: only a 0 needs the second call that tells the two apart. A kernel row
  // has ~20 columns; halving the calls per column saves a third of the read.
  std::int64_t v = sqlite3_column_int64(stmt_, column);
  if (v == 0 && is_null(column)) return std::nullopt;
  return v;
}

std::uint64_t SqliteStatement::int64_columns(int count, std::int64_t* values) const {
  std::uint64_t nulls = 0;
  for (int c = 0; c < count; ++c) {
    values[c] = sqlite3_column_int64(stmt_, c);
    if (values[c] == 0 && sqlite3_column_type(stmt_, c) == SQLITE_NULL) nulls |= std::uint64_t{1} << c;
  }
  return nulls;
}

std::optional<double> SqliteStatement::opt_double(int column) const {
  if (is_null(column)) return std::nullopt;
  return sqlite3_column_double(stmt_, column);
}

std::string_view SqliteStatement::text(int column) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  if (!p) return {};
  return {p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))};
}

void SqliteStatement::bind(int parameter, std::int64_t value) {
  sqlite3_bind_int64(stmt_, parameter, value);
}

void SqliteStatement::bind(int parameter, double value) {
  sqlite3_bind_double(stmt_, parameter, value);
}

void SqliteStatement::bind(int parameter, std::string_view value) {
  // SQLite keeps whatever bytes it is given as TEXT; a database of valid UTF-8 reads back
  // into every format (common/text.h).
  if (auto repaired = repaired_utf8(value)) {
    sqlite3_bind_text64(stmt_, parameter, repaired->data(), repaired->size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    return;
  }
  sqlite3_bind_text64(stmt_, parameter, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

void SqliteStatement::bind(int parameter, const std::optional<double>& value) {
  if (value) {
    bind(parameter, *value);
  } else {
    bind_null(parameter);
  }
}

void SqliteStatement::bind(int parameter, const std::optional<std::int64_t>& value) {
  if (value) {
    bind(parameter, *value);
  } else {
    bind_null(parameter);
  }
}

void SqliteStatement::bind_text_or_null(int parameter, std::string_view value) {
  if (value.empty()) {
    bind_null(parameter);
  } else {
    bind(parameter, value);
  }
}

void SqliteStatement::bind_null(int parameter) {
  sqlite3_bind_null(stmt_, parameter);
}

Status SqliteStatement::run() {
  while (step()) {
  }
  if (error_) return make_error("", 0, *error_);
  return ok_status();
}

int SqliteStatement::column_count() const {
  return sqlite3_column_count(stmt_);
}

std::string SqliteStatement::column_name(int column) const {
  const char* name = sqlite3_column_name(stmt_, column);
  return name ? name : "";
}

SqliteStatement::Type SqliteStatement::type(int column) const {
  switch (sqlite3_column_type(stmt_, column)) {
    case SQLITE_INTEGER: return Type::kInteger;
    case SQLITE_FLOAT: return Type::kFloat;
    case SQLITE_TEXT: return Type::kText;
    case SQLITE_BLOB: return Type::kBlob;
    default: return Type::kNull;
  }
}

double SqliteStatement::float64(int column) const {
  return sqlite3_column_double(stmt_, column);
}

bool SqliteStatement::read_only() const {
  return sqlite3_stmt_readonly(stmt_) != 0;
}

void SqliteStatement::reset() {
  sqlite3_reset(stmt_);
  error_.reset();
}

SqliteDb::SqliteDb(SqliteDb&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), deadline_(std::move(other.deadline_)) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    sqlite3_close(db_);
    db_ = std::exchange(other.db_, nullptr);
    deadline_ = std::move(other.deadline_);
  }
  return *this;
}

namespace {

// SQLite calls this every few thousand steps of a statement; non-zero interrupts it.
int past_deadline(void* deadline) {
  return std::chrono::steady_clock::now() > *static_cast<std::chrono::steady_clock::time_point*>(deadline);
}

constexpr int kStepsBetweenChecks = 10000;

}  // namespace

void SqliteDb::set_time_limit(double seconds) const {
  if (seconds <= 0) {
    sqlite3_progress_handler(db_, 0, nullptr, nullptr);
    deadline_.reset();
    return;
  }
  auto limit = std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  deadline_ = std::make_unique<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now() + limit);
  sqlite3_progress_handler(db_, kStepsBetweenChecks, past_deadline, deadline_.get());
}

bool SqliteDb::past_time_limit() const {
  return deadline_ && std::chrono::steady_clock::now() > *deadline_;
}

SqliteDb::~SqliteDb() {
  sqlite3_close(db_);
}

namespace {

// One connection is used by one thread at a time: without SQLite's per-call mutex, reading a
// million rows is ~10% faster. And SQLite keeps no memory statistics: with them every
// allocation of SQLite's takes one process-wide mutex, and 16 threads opening connections at
// once (each parsing the schema) spent ~12 ms of an nsys read contending for it on the GPU
// machine. The setting must come before SQLite initialises, so the first open makes it;
// where the process initialised SQLite before (Python's sqlite3 module beside our extension)
// SQLite refuses it, which costs only that contention.
int open_flags() {
  static const int flags = [] {
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    return SQLITE_OPEN_NOMUTEX;
  }();
  return flags;
}

}  // namespace

// Defensive mode and an untrusted schema: a damaged or hostile file cannot make SQLite write
// to it or run functions hidden in its schema.
Result<SqliteDb> SqliteDb::configured(sqlite3* raw, int open_rc) {
  SqliteDb db(raw);
  if (open_rc != SQLITE_OK) {
    return make_error("", 0, raw ? sqlite3_errmsg(raw) : sqlite3_errstr(open_rc));
  }
  sqlite3_db_config(raw, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  // fts3_tokenizer(NAME, POINTER) would let SQL text hand SQLite a function pointer.
  sqlite3_db_config(raw, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, nullptr);
  return db;
}

namespace {

// Bytes 18 and 19 of the header: the file format's write and read versions, 2 in WAL mode.
constexpr std::size_t kFormatVersions = 18;

bool is_wal_header(std::string_view header) {
  return header.size() > kFormatVersions + 1 &&
         (header[kFormatVersions] == 2 || header[kFormatVersions + 1] == 2);
}

}  // namespace

Result<SqliteDb> SqliteDb::open_bytes(std::string_view bytes) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(":memory:", &raw, open_flags() | SQLITE_OPEN_READWRITE, nullptr);
  auto db = configured(raw, rc);
  if (!db) return db;
  auto* data = reinterpret_cast<unsigned char*>(const_cast<char*>(bytes.data()));
  auto size = static_cast<sqlite3_int64>(bytes.size());
  unsigned flags = SQLITE_DESERIALIZE_READONLY;  // SQLite reads the buffer in place, never writes it
  if (is_wal_header(bytes)) {
    // A database in memory cannot be in WAL mode (SQLite says "unable to open database
    // file"). The bytes are the whole database (a write-ahead log beside the file is read
    // from the file, see sqlite_has_pending_wal), so a copy marked as a rollback-journal
    // database reads the same.
    data = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size()));
    if (!data) return make_error("", 0, "out of memory for a copy of the database");
    std::memcpy(data, bytes.data(), bytes.size());
    data[kFormatVersions] = data[kFormatVersions + 1] = 1;
    flags |= SQLITE_DESERIALIZE_FREEONCLOSE;  // freed by SQLite, even when this call fails
  }
  rc = sqlite3_deserialize(raw, "main", data, size, size, flags);
  if (rc != SQLITE_OK) return make_error("", 0, sqlite3_errmsg(raw));
  return db;
}

namespace {

// "file:" URI of a path: every byte but unreserved ones and '/' percent-encoded, so that
// '?', '#' and '%' in names are not read as URI syntax.
std::string file_uri(const std::string& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("-._~/", c)) {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 15];
    }
  }
  return uri;
}

}  // namespace

bool sqlite_has_pending_wal(const std::string& path) {
  struct stat st {};
  return ::stat((path + "-wal").c_str(), &st) == 0 && st.st_size > 0;
}

Result<SqliteDb> SqliteDb::open_file(const std::string& path) {
  // Immutable: no locks, no -shm file, no write of any kind, so read-only storage is fine.
  // But an immutable connection ignores the write-ahead log; when one holds changes, they
  // are read as any reader does, through the shared-memory index PATH-shm.
  const bool pending_wal = sqlite_has_pending_wal(path);
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2((file_uri(path) + (pending_wal ? "?mode=ro" : "?immutable=1")).c_str(), &raw,
                           open_flags() | SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  auto db = configured(raw, rc);
  if (!db || !pending_wal) return db;
  // SQLite opens the log on the first read: try one, to say what is wrong when it cannot.
  if (auto probe = db->prepare("SELECT count(*) FROM sqlite_master")) {
    probe->step();
    if (!probe->error()) return db;
  }
  return make_error("", 0,
                    "the database is in WAL mode and its log " + path + "-wal holds changes not yet in " +
                        "the file; SQLite cannot read them here (" + db->message() + "): it needs " + path +
                        "-shm, which it cannot create on read-only storage. Copy both files to writable "
                        "storage, or checkpoint the log where it was written: sqlite3 FILE "
                        "'PRAGMA wal_checkpoint(TRUNCATE)'");
}

namespace {

Result<SqliteDb> with_busy_timeout(Result<SqliteDb> db, sqlite3* raw, int busy_timeout_ms) {
  if (db) sqlite3_busy_timeout(raw, busy_timeout_ms);
  return db;
}

}  // namespace

Result<SqliteDb> SqliteDb::open_writable(const std::string& path, int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(file_uri(path).c_str(), &raw,
                           open_flags() | SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                           nullptr);
  return with_busy_timeout(configured(raw, rc), raw, busy_timeout_ms);
}

Result<SqliteDb> SqliteDb::open_read_only(const std::string& path, int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(file_uri(path).c_str(), &raw,
                           open_flags() | SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  return with_busy_timeout(configured(raw, rc), raw, busy_timeout_ms);
}

Status SqliteDb::exec(const std::string& sql) const {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    return make_error("", 0, text);
  }
  return ok_status();
}

Result<SqliteStatement> SqliteDb::prepare_single(const std::string& sql) const {
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, &tail) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return make_error("", 0, sqlite3_errmsg(db_));
  }
  SqliteStatement statement(db_, stmt);
  if (!stmt) return make_error("", 0, "no SQL statement");
  // What follows may be comments, blanks and semicolons (SQLite prepares those to no
  // statement), nothing else.
  const char* end = sql.c_str() + sql.size();
  while (tail && tail < end) {
    sqlite3_stmt* next = nullptr;
    const char* after = nullptr;
    int rc = sqlite3_prepare_v2(db_, tail, static_cast<int>(end - tail), &next, &after);
    sqlite3_finalize(next);
    if (rc != SQLITE_OK || next) return make_error("", 0, "one SQL statement at a time (found more after the first)");
    if (after == tail) return make_error("", 0, "cannot read the SQL after the first statement");
    tail = after;
  }
  return statement;
}

std::int64_t SqliteDb::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_);
}

Result<SqliteStatement> SqliteDb::prepare(const std::string& sql) const {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr) !=
      SQLITE_OK) {
    sqlite3_finalize(stmt);
    return make_error("", 0, sqlite3_errmsg(db_));
  }
  return SqliteStatement(db_, stmt);
}

Result<std::vector<std::string>> SqliteDb::table_names() const {
  auto stmt = prepare("SELECT name FROM sqlite_master WHERE type = 'table'");
  if (!stmt) return stmt.error();
  std::vector<std::string> names;
  while (stmt->step()) names.emplace_back(stmt->text(0));
  if (stmt->error()) return make_error("", 0, *stmt->error());
  return names;
}

Result<std::vector<std::string>> SqliteDb::columns(std::string_view table) const {
  auto stmt = prepare("PRAGMA table_info(" + sql_quote(table) + ")");
  if (!stmt) return stmt.error();
  std::vector<std::string> names;
  while (stmt->step()) names.emplace_back(stmt->text(1));
  if (stmt->error()) return make_error("", 0, *stmt->error());
  return names;
}

std::string SqliteDb::message() const {
  return db_ ? sqlite3_errmsg(db_) : "no database";
}

std::string sql_quote(std::string_view identifier) {
  std::string out = "\"";
  for (char c : identifier) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

bool is_sqlite_header(std::string_view bytes) {
  return bytes.substr(0, 16) == std::string_view("SQLite format 3\0", 16);
}

namespace {

std::uint32_t big_endian(std::string_view bytes, std::size_t at, std::size_t width) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < width; ++i) v = v << 8 | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

}  // namespace

std::optional<std::uint64_t> sqlite_declared_size_beyond(std::string_view header,
                                                         std::uint64_t size) {
  if (header.size() < 100 || !is_sqlite_header(header)) return std::nullopt;
  // File format: page size at offset 16 (1 means 65536); the page count at 28 is valid only
  // when the change counter at 24 equals the version-valid-for number at 92.
  std::uint64_t page_size = big_endian(header, 16, 2);
  if (page_size == 1) page_size = 65536;
  std::uint64_t pages = big_endian(header, 28, 4);
  if (pages == 0 || big_endian(header, 24, 4) != big_endian(header, 92, 4)) return std::nullopt;
  std::uint64_t declared = pages * page_size;
  if (declared <= size) return std::nullopt;
  return declared;
}

}  // namespace kernlens
