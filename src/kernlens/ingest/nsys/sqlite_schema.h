// The parts of an Nsight Systems SQLite export that every table's reader uses (nsys/sqlite.h
// says what is read from which table): the table names, nsys's global ids, the export's tables
// and columns looked up by name (they change between versions), and StringIds. Internal to
// ingest/nsys.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <future>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernlens/common/memory.h"
#include "kernlens/common/sqlite_db.h"
#include "kernlens/ingest/reader.h"

namespace kernlens::ingest::nsys {

inline constexpr std::string_view kKernels = "CUPTI_ACTIVITY_KIND_KERNEL";
inline constexpr std::string_view kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
inline constexpr std::string_view kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
inline constexpr std::string_view kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
inline constexpr std::string_view kNvtx = "NVTX_EVENTS";
inline constexpr std::string_view kStrings = "StringIds";
// The export's own description: EXPORT_META_DATA in schema 2.x, META_DATA_EXPORT in 3.x.
inline constexpr std::array<std::string_view, 2> kMetadataTables = {"META_DATA_EXPORT",
                                                             "EXPORT_META_DATA"};

// Timestamps are ns since the session start. Far beyond a century they are damage, and
// rejecting them keeps every later difference and sum of two timestamps within 64 bits.
inline bool plausible_time(std::int64_t ns) {
  return ns > -(std::int64_t{1} << 61) && ns < (std::int64_t{1} << 61);
}

// Serialized global ids (nsys's report scripts decode them so): the process id in bits 24-47,
// the thread id in bits 0-23. A globalPid is the globalTid of its process with no thread bits.
inline std::int64_t process_of(std::int64_t global_id) {
  return global_id & ~std::int64_t{0xFFFFFF};
}
inline std::int64_t pid_of(std::int64_t global_id) {
  return (global_id >> 24) & 0xFFFFFF;
}
inline std::int64_t tid_of(std::int64_t global_id) {
  return global_id & 0xFFFFFF;
}

struct Column {
  std::string_view name;
  bool required = false;
};

// Where the database lies, so that another thread can open a connection of its own.
struct DbSource {
  std::string_view bytes;  // the database in memory, unless
  std::string path;        // it is read from this file

  Result<SqliteDb> open() const {
    return path.empty() ? SqliteDb::open_bytes(bytes) : SqliteDb::open_file(path);
  }
  // A connection for one scan of a rowid range: each page is read once, so SQLite's default
  // 2 MB page cache only holds memory (one per thread at --threads 16: 30+ MB).
  Result<SqliteDb> open_for_a_scan() const {
    auto db = open();
    if (db) (void)db->exec("PRAGMA cache_size = -128");  // KiB; a failure only costs memory
    return db;
  }
};

// The threads to read with: --threads (ReadOptions::threads, else default_threads()), but one
// per min_part_bytes of the file at most.
unsigned reader_threads(const ReadContext& ctx, std::uint64_t file_bytes);

// The export's tables, and SELECTs over their columns by name.
class Schema {
 public:
  Schema(const SqliteDb& db, ReadContext& ctx) : db_(db), ctx_(ctx) {}

  // Errors: a file SQLite cannot read (not a database, damaged, truncated).
  Status load();

  bool has(std::string_view table) const {
    return std::find(tables_.begin(), tables_.end(), table) != tables_.end();
  }
  bool has_any_table_starting(std::string_view prefix) const;
  bool has_column(std::string_view table, std::string_view column);

  // SELECT of `columns` in their order; an absent optional column reads as NULL.
  Result<SqliteStatement> select(std::string_view table, std::span<const Column> columns,
                                 std::string_view where = {});
  // The SELECT of `columns` and then the rowid, from the rowid ?1 on, for a reader of one of
  // rowid_ranges(): RowidOrder checks the rowids and ends the range.
  Result<std::string> select_range_sql(std::string_view table, std::span<const Column> columns);
  // The SQL of that SELECT, to run on another connection.
  Result<std::string> select_sql(std::string_view table, std::span<const Column> columns,
                                 std::string_view where = {});

  // ok, or unreadable() when `stmt` stopped on an error of the file's content.
  Status finished(const SqliteStatement& stmt, std::string_view table) const;
  // An error for a query that failed on the file's content.
  Error unreadable(const std::string& what) const;
  // About how many rows `table` has, cheaply (nsys numbers rows densely), for reserving
  // memory: growing a vector of a million launches step by step costs more than reading them.
  // Bounded by what a file of `file_bytes` can hold, whatever its rowids claim.
  std::size_t row_estimate(std::string_view table, std::uint64_t file_bytes) const;
  // `table` cut into up to `parts` ranges [first, end) of rowids, in order, covering every
  // rowid from the least to the greatest, for readers that keep a slot of `slot_bytes` per
  // rowid. None (read it in one scan) for one part, an empty table, or rowids too sparse: more
  // than row_estimate, or slots that would take more memory than the file where the rowids
  // are not dense (nsys numbers rows 1..n; a few far-apart rowids must not cost the gaps).
  std::vector<std::pair<std::int64_t, std::int64_t>> rowid_ranges(std::string_view table,
                                                                  std::uint64_t parts,
                                                                  std::uint64_t file_bytes,
                                                                  std::size_t slot_bytes) const;

  std::string version_note() const {
    return version_.empty() ? std::string() : " (export schema " + version_ + ")";
  }

 private:
  const std::vector<std::string>* columns(std::string_view table);
  void read_version();

  const SqliteDb& db_;
  ReadContext& ctx_;
  std::vector<std::string> tables_;
  std::map<std::string, std::vector<std::string>> columns_;
  std::string version_;
};

// Schema::rowid_ranges on any connection to the export, for a table it has: `max_rows` is
// its row_estimate.
std::vector<std::pair<std::int64_t, std::int64_t>> rowid_ranges(const SqliteDb& db, std::string_view table,
                                                                std::uint64_t parts, std::uint64_t max_rows,
                                                                std::uint64_t file_bytes, std::size_t slot_bytes);

// Whether the rows of a range come in increasing rowid order within it, as a sound table's
// do, and where the range ends: at the first rowid past it, as SQLite's own bound `rowid < ?2`
// would stop (the SELECT has none: it tested the rowid once more a row, ~8% of a 16-thread
// read's instructions with the rowid read back besides). A damaged b-tree (rowids out of
// order) can give ranges other rows, or another error, than one scan of the whole table: a
// reader that sees one out of order reads the table again in one scan, so that any number of
// threads reads a damaged file as one does. It also keeps a range's rows within the range's
// span, the slots a kernel part writes into.
class RowidOrder {
 public:
  enum class Row { kInOrder, kPastTheEnd, kOutOfOrder };
  RowidOrder(std::int64_t first, std::int64_t end) : first_(first), end_(end) {}
  // What the range's next row is; the range's rows end at the first past its end.
  Row next(std::int64_t rowid) {
    if (rowid >= end_) return Row::kPastTheEnd;  // above every rowid before it (each < end_)
    const bool in_order = rowid >= first_ && (!seen_any_ || rowid > last_);
    seen_any_ = true;
    last_ = rowid;
    return in_order ? Row::kInOrder : Row::kOutOfOrder;
  }

 private:
  // A flag and a value, not std::optional: GCC 12's -Wmaybe-uninitialized (an error in CI's
  // -Werror build) misreads an optional's value here once inlined.
  std::int64_t first_, end_;
  bool seen_any_ = false;
  std::int64_t last_ = 0;
};

// How many rows one scan of the whole of `table` walks (SQLite's count(*): the b-tree's leaf
// cells, counted page by page, none decoded); nullopt on an error. Ranges whose rows each came
// in order (RowidOrder) and as many rows in all are the rows of that scan, in its order:
// - a range walks on from where its seek lands as the scan walks, and a seek cannot reach a
//   page the scan does not: each row a range gives is a row of the scan;
// - the ranges' rowid intervals do not overlap, so no row is given twice: as many in all are
//   every row of the scan, once;
// - of two rows one after the other in the scan, the range that gave the first also read the
//   second, and stopped there only at its end: in order within it, or past it, the second's
//   rowid is the greater. The scan's rowids rise, and the ranges in order are the scan.
// A damaged b-tree whose seeks skip rows reads fewer; one whose rowids fall somewhere has a
// range see one out of order. (A scan that decoded every rowid to check their order took
// 60-120 ms of one thread beside a 16-thread read, which waited for it at its end.)
std::optional<std::uint64_t> rows_of_one_scan(const SqliteDb& db, std::string_view table);

// That count on a connection and thread of its own, for a read in rowid ranges to check its
// rows against when it ends. Begun early, beside other work.
class RowCount {
 public:
  RowCount() = default;  // none
  // Begins the count of `table` now; its CPU is charged to `cpu` where set (--verbose), which
  // must outlive the count.
  RowCount(DbSource source, std::string table, CpuTally* cpu = nullptr);

  bool begun() const { return rows_.valid(); }
  // The count (nullopt where the export cannot be opened, or none was begun: a read checked
  // against it then falls back to one scan); waits for it.
  std::optional<std::uint64_t> rows_if_begun() const { return begun() ? rows_.get() : std::nullopt; }

 private:
  std::shared_future<std::optional<std::uint64_t>> rows_;
};

// StringIds values by id, looked up on demand: an export holds many strings (call stacks,
// file names) and only a few are kernel or range names.
class Strings {
 public:
  Status open(Schema& schema);
  // The string with this id; nullopt when there is none.
  const std::optional<std::string>& get(std::int64_t id);

 private:
  SqliteStatement lookup_;
  std::unordered_map<std::int64_t, std::optional<std::string>> cache_;
};

}  // namespace kernlens::ingest::nsys
