#include "kernlens/store/database.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>
#include <optional>

#include <fmt/format.h>

#include "kernlens/common/file.h"
#include "kernlens/store/schema.h"
#include "kernlens/store/transaction.h"

namespace kernlens::store {
namespace {


Error at(const std::string& path, const Error& e) {
  return make_error(path, 0, e.message);
}

Result<std::int64_t> single_int(const SqliteDb& db, const std::string& sql) {
  auto stmt = db.prepare(sql);
  if (!stmt) return stmt.error();
  if (!stmt->step()) return make_error("", 0, stmt->error().value_or("no row from " + sql));
  return stmt->int64(0);
}

// Errors when the file exists and is not an SQLite database at all.
Status check_header(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0) return ok_status();
  auto head = read_file_head(path, 100);
  if (!head) return head.error();
  if (!is_sqlite_header(*head)) {
    return make_error(path, 0, "not a kernlens database: not an SQLite file");
  }
  return ok_status();
}

// check_ours on one snapshot.
Status check_snapshot(const SqliteDb& db, const std::string& path) {
  auto version = single_int(db, "PRAGMA user_version");
  if (!version) return make_error(path, 0, "not a readable kernlens database: " + version.error().message);
  auto tables = db.table_names();
  if (!tables) return make_error(path, 0, "not a readable kernlens database: " + tables.error().message);
  auto ours = schema_tables();
  for (const auto& table : *tables) {
    bool known = std::find(ours.begin(), ours.end(), table) != ours.end();
    if (!known && table.rfind("sqlite_", 0) != 0) {
      return make_error(path, 0,
                        fmt::format("not a kernlens database: an SQLite database with table '{}'", table));
    }
  }
  bool has_migrations = std::find(tables->begin(), tables->end(), "schema_migrations") != tables->end();
  // Version 0 is a new, empty file: tables there (even of our names) are someone else's.
  auto user_table = std::find_if(tables->begin(), tables->end(),
                                 [](const std::string& t) { return t.rfind("sqlite_", 0) != 0; });
  if (*version == 0 && user_table != tables->end()) {
    return make_error(path, 0, fmt::format("not a kernlens database: an SQLite database with table '{}' "
                                           "and no kernlens schema", *user_table));
  }
  if (*version > 0 && !has_migrations) {
    return make_error(path, 0, fmt::format("not a kernlens database: user_version {} but no schema_migrations",
                                           *version));
  }
  if (*version > schema_version()) {
    return make_error(path, 0, fmt::format("made by a newer kernlens (schema {}; this one knows up to {})",
                                           *version, schema_version()));
  }
  return ok_status();
}

// Errors when the database was made by something else, or by a newer kernlens. One read
// transaction: its version and its tables come from one snapshot, as another process may commit
// the first migration between two reads (then version 0 with tables looked like a foreign file).
Status check_ours(const SqliteDb& db, const std::string& path) {
  if (Status s = db.exec("BEGIN"); !s) return make_error(path, 0, "not a readable kernlens database: " + s.error().message);
  Status checked = check_snapshot(db, path);
  if (Status s = db.exec("COMMIT"); !s && checked) return make_error(path, 0, s.error().message);
  return checked;
}

// Runs `pragma`. Switching a database another process is creating or converting to WAL can
// answer "database is locked" at once, without SQLite's busy handler: retried, as the handler
// would, until the busy timeout.
Status run_pragma(const SqliteDb& db, const char* pragma) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    auto stmt = db.prepare(pragma);
    if (!stmt) return stmt.error();
    while (stmt->step()) {
    }
    if (!stmt->error()) return ok_status();
    const std::string why = *stmt->error();
    if (why.find("locked") == std::string::npos || std::chrono::steady_clock::now() > deadline) return make_error("", 0, why);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Whether this user may create files beside `path`. Where not (a shared results directory,
// a mounted archive) nobody is writing the database either, and SQLite's read-only open of a
// WAL database, which creates PATH-shm, would fail: it is read immutable instead.
bool on_writable_storage(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return ::access(dir.empty() ? "." : dir.c_str(), W_OK) == 0;
}

Status apply(const SqliteDb& db, const Migration& m) {
  auto tx = Transaction::begin_immediate(db);
  if (!tx) return tx.error();
  auto current = single_int(db, "PRAGMA user_version");
  if (!current) return current.error();
  if (*current >= m.version) return tx->commit();  // another process migrated meanwhile
  if (Status s = db.exec(std::string(m.sql)); !s) return s;
  auto record = db.prepare("INSERT INTO schema_migrations (version, description) VALUES (?1, ?2)");
  if (!record) return record.error();
  record->bind(1, std::int64_t{m.version});
  record->bind(2, m.description);
  if (Status s = record->run(); !s) return s;
  if (Status s = db.exec(fmt::format("PRAGMA user_version = {}", m.version)); !s) return s;
  return tx->commit();
}

Status migrate(const SqliteDb& db) {
  for (const auto& m : migrations()) {
    if (Status s = apply(db, m); !s) return s;
  }
  return ok_status();
}

}  // namespace

Result<SqliteDb> open_for_writing(const std::string& path) {
  if (Status s = check_header(path); !s) return s.error();
  auto db = SqliteDb::open_writable(path, kBusyTimeoutMs);
  if (!db) return at(path, db.error());
  // Checked before any pragma: switching the journal mode writes to the file's header.
  if (Status s = check_ours(*db, path); !s) return s.error();
  // WAL: readers never block the writer and a writer's half-done transaction stays in the
  // log until COMMIT. synchronous=NORMAL keeps commits atomic; only the last ones may be
  // lost when the machine (not the process) dies.
  // A 64 MiB page cache: the kernels' indexes are written in key order, not file order, and
  // with SQLite's 2 MiB default most inserts read their page back from the OS.
  for (const char* pragma : {"PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON",
                             "PRAGMA cache_size = -65536"}) {
    if (Status s = run_pragma(*db, pragma); !s) return make_error(path, 0, "not a usable kernlens database: " + s.error().message);
  }
  if (Status s = migrate(*db); !s) return make_error(path, 0, "cannot create the schema: " + s.error().message);
  return db;
}

Result<SqliteDb> open_for_reading(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return make_error(path, 0, "no database here (create one with kernlens db ingest)");
  if (Status s = check_header(path); !s) return s.error();
  auto db = on_writable_storage(path) ? SqliteDb::open_read_only(path, kBusyTimeoutMs) : SqliteDb::open_file(path);
  if (!db) return at(path, db.error());
  if (Status s = db->exec("PRAGMA query_only = 1; PRAGMA cache_size = -65536"); !s) return at(path, s.error());
  if (Status s = check_ours(*db, path); !s) return s.error();
  auto version = single_int(*db, "PRAGMA user_version");
  if (!version) return at(path, version.error());
  if (*version < schema_version()) {
    return make_error(path, 0, fmt::format("schema {} is older than {}: kernlens db ingest migrates it",
                                           *version, schema_version()));
  }
  return db;
}

}  // namespace kernlens::store
