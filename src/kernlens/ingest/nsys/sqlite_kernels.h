// Reading the rows of an nsys export's GPU activity tables, and the kernel table in parts
// (rowid ranges, each on a connection and thread of its own) for --threads. A part touches no
// shared state: it keeps the names and processes it meets in tables of its own, in the order
// it meets them, and the reader merges the parts in rowid order (sqlite_reader.cpp), so the
// profile is the one a single scan gives. Internal to ingest/nsys.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernlens/common/sqlite_db.h"
#include "kernlens/model/profile.h"

namespace kernlens::ingest::nsys {

// Columns every GPU activity table has, first in every SELECT of one.
enum OpColumn : int {
  kStart,
  kEnd,
  kDeviceId,
  kContextId,
  kStreamId,
  kCorrelationId,
  kGlobalPid,
  kExtra
};

// The kernel table's columns after those.
enum KernelColumn : int {
  kDemangled = kExtra,
  kShortName,
  kMangled,
  kGridX,
  kGridY,
  kGridZ,
  kBlockX,
  kBlockY,
  kBlockZ,
  kRegisters,
  kStaticShared,
  kDynamicShared,
  kKernelColumnCount
};

// A row's integer columns, read at once (SqliteStatement::int64_columns): a kernel row is ~20
// integers, and a call of ours around each of SQLite's was ~490 of the ~5,800 instructions of
// reading one (callgrind).
struct IntRow {
  std::array<std::int64_t, kKernelColumnCount + 1> values{};  // and a ranged SELECT's rowid
  std::uint64_t nulls = 0;                                     // bit c: column c is NULL

  // Columns [0, count) of the statement's row.
  void read(const SqliteStatement& stmt, int count) { nulls = stmt.int64_columns(count, values.data()); }
  std::int64_t operator[](int column) const { return values[static_cast<std::size_t>(column)]; }
  std::optional<std::int64_t> opt(int column) const {
    if (nulls >> column & 1) return std::nullopt;
    return values[static_cast<std::size_t>(column)];
  }
};

// What a row says about who launched it, for the caller to look up.
struct OpIds {
  std::optional<std::int64_t> global_pid, correlation;
  std::int64_t end = 0;
};

// The common columns of one GPU activity row (`row`, read from `stmt`'s current row) into `l`
// (times, device, context, stream, the correlation id as l.id). On bad values, what is wrong
// (the caller adds table and row).
std::optional<std::string> read_op_row(const SqliteStatement& stmt, const IntRow& row, std::uint32_t input,
                                       model::Launch& l, OpIds& ids);

// A kernel's name ids: demangled, short, mangled (StringIds), resolved in that order.
struct NameIds {
  std::optional<std::int64_t> demangled, short_name, mangled;
  bool operator==(const NameIds&) const = default;
};

// One rowid range of the kernel table, read into launches whose `name` is an index into
// `names`, whose `config` one into `configs` and whose `process` is 1 + an index into `pids`
// (0: no globalPid); merge_* fix all three.
struct KernelPart {
  std::int64_t first_rowid = std::numeric_limits<std::int64_t>::min();
  std::int64_t end_rowid =
      std::numeric_limits<std::int64_t>::max();  // exclusive; both unused for one part

  std::size_t rows = 0;  // launches read (rows before a bad one)
  // The first bad row (1-based within the part) and what is wrong with it.
  std::optional<std::pair<std::size_t, std::string>> bad_row;
  std::optional<std::string> sqlite_error;  // SQLite stopped on the file's content
  bool out_of_order = false;                // a rowid out of its place (RowidOrder): damage
  std::vector<NameIds> names;               // in the order first met
  std::vector<std::size_t> name_first_row;  // the row that first met names[i]
  std::vector<std::int64_t> pids;           // globalPids in the order first met
  std::vector<model::LaunchConfig> configs;  // launch configurations in the order first met
  std::int64_t trace_end = std::numeric_limits<std::int64_t>::min();

  std::size_t span() const { return static_cast<std::size_t>(end_rowid - first_rowid); }  // of a range
};

// How many rowid ranges a kernel table of `rows` rows is cut into for `threads` threads, which
// take them as they come free: 4 a thread at least, and none of more than kMostRowsAPart rows.
// The threads' last parts end apart by up to a part's time, with nothing left for the threads
// done first: the 8 M export's 64 parts on 16 threads were 125,000 rows each, ~0.15 s of a
// thread of the GPU machine, and its kernel rows kept 15.1 of its 16 CPUs busy. A part of
// 32,768 rows is ~40 ms there, and a part costs a seek and its own few names to merge.
inline constexpr std::uint64_t kMostRowsAPart = 32768;
std::uint64_t kernel_part_count(unsigned threads, std::uint64_t rows);

// Reads `stmt` (a kernel SELECT of KernelColumn columns, then with `ranged` the rowid of the
// part's range) into
// launches handed to `emit`, recording what the part meets. Stops at the first bad row.
void read_kernel_part(SqliteStatement& stmt, std::uint32_t input, bool ranged, KernelPart& part,
                      const std::function<void(model::Launch&&)>& emit);

}  // namespace kernlens::ingest::nsys
