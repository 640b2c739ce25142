// A write transaction that is undone unless committed: every early return leaves the
// database file as it was.
#pragma once

#include <utility>

#include "kernlens/common/sqlite_db.h"

namespace kernlens::store {

class Transaction {
 public:
  // BEGIN IMMEDIATE: takes the write lock now (waiting up to the busy timeout), so that two
  // writers never both read and then both fail to write.
  static Result<Transaction> begin_immediate(const SqliteDb& db) {
    if (Status s = db.exec("BEGIN IMMEDIATE"); !s) return s.error();
    return Transaction(db);
  }
  Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (db_) (void)db_->exec("ROLLBACK");
  }
  Status commit() {
    Status s = db_->exec("COMMIT");
    if (s) db_ = nullptr;
    return s;
  }

 private:
  explicit Transaction(const SqliteDb& db) : db_(&db) {}
  const SqliteDb* db_;
};

}  // namespace kernlens::store
