// The Nsight Systems SQLite reader: on a real nsys 2022.2 export (schema 2.9.1), on the export
// generated from a real H100 PyTorch trace in the documented 3.x schema, and on small
// databases built here for what the fixtures do not show (domains, start/end ranges, enum
// tables, damage).
#include "kernlens/ingest/nsys/sqlite.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <string>

#include <fmt/format.h>

#include "kernlens/ingest/nsys/sqlite_calls.h"
#include "kernlens/ingest/nsys/sqlite_kernels.h"
#include "kernlens/ingest/nsys/sqlite_schema.h"
#include "test_util.h"

namespace kernlens {
namespace {

using test::fixture_bytes;
using test::read_bytes;
using test::read_fixture;

// A database built from SQL statements, as the bytes of its file.
std::string database(const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_int64 size = 0;
  unsigned char* data = sqlite3_serialize(db, "main", &size, 0);
  std::string bytes(reinterpret_cast<const char*>(data), static_cast<std::size_t>(size));
  sqlite3_free(data);
  sqlite3_close(db);
  return bytes;
}

// The tables a reader needs, with only some of nsys's columns: the reader looks them up by
// name. Process 7, thread 8: globalPid 7 << 24, globalTid (7 << 24) | 8.
constexpr const char* kExport = R"(
  CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
  INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.28.1');
  CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
  INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'llm'), (3, 'attention');
  CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
    demangledName INTEGER, shortName INTEGER);
  CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
    globalTid INTEGER, correlationId INTEGER, nameId INTEGER);
  CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
    text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
)";
constexpr std::int64_t kPid = std::int64_t{7} << 24;
constexpr std::int64_t kTid = kPid | 8;

// One kernel of `gemm_kernel` on [start, end) launched by an API call on [call, call + 5).
std::string kernel(int correlation, std::int64_t call, std::int64_t start, std::int64_t end) {
  return "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + std::to_string(start) + ", " +
         std::to_string(end) + ", 0, 7, " + std::to_string(correlation) + ", " +
         std::to_string(kPid) + ", 1, 1);" + "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" +
         std::to_string(call) + ", " + std::to_string(call + 5) + ", " + std::to_string(kTid) +
         ", " + std::to_string(correlation) + ", 0);";
}

std::string nvtx(std::int64_t start, const std::string& end, int type, const std::string& text,
                 const std::string& text_id = "NULL", const std::string& domain = "0",
                 const std::string& end_tid = "NULL") {
  return "INSERT INTO NVTX_EVENTS VALUES (" + std::to_string(start) + ", " + end + ", " +
         std::to_string(type) + ", " + text + ", " + std::to_string(kTid) + ", " + end_tid + ", " +
         text_id + ", " + domain + ");";
}

std::string warnings(const model::Profile& p) {
  std::string out;
  for (const auto& w : p.inputs.at(0).warnings) out += w.message + "\n";
  return out;
}

// ---- real exports -----------------------------------------------------------------------

TEST(NsysSqlite, SaxpyExportOfNsys2022) {
  auto r = read_fixture("nsys/saxpy-mpi-cuda_nsys2022.2.sqlite");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const auto& p = r.profile;
  EXPECT_EQ(p.inputs[0].format, model::InputFormat::kNsysSqlite);
  EXPECT_EQ(warnings(p), "");
  std::vector<const model::Launch*> kernels;
  double total = 0;
  for (const auto& l : p.launches) {
    if (l.kind != model::LaunchKind::kKernel) continue;
    kernels.push_back(&l);
    total += *l.total_duration_ns();
  }
  ASSERT_EQ(kernels.size(), 5u);
  EXPECT_EQ(total, 88573480);  // nsys stats cuda_gpu_kern_sum on the same file says so too
  const model::Launch& k = *kernels[0];
  EXPECT_EQ(p.names[k.name], "saxpy(double *, double *, double *, double, int)");
  EXPECT_EQ(k.id, 140);  // the correlation id
  EXPECT_EQ(*k.start_ns, 924922186);
  EXPECT_EQ(*k.duration_ns, 17704808);
  const model::LaunchConfig& c = p.config_of(k);
  EXPECT_EQ(c.grid, (model::Dim3{2, 1, 1}));
  EXPECT_EQ(c.block, (model::Dim3{512, 1, 1}));
  EXPECT_EQ(c.registers_per_thread, 26);
  EXPECT_EQ(c.static_shared_bytes, 0);
  EXPECT_EQ(c.dynamic_shared_bytes, 0);
  EXPECT_EQ(k.stream_id, 7);
  EXPECT_EQ(k.context_id, 1);
  EXPECT_EQ(k.device_ordinal, 0);
  EXPECT_EQ(k.thread_id, 1230493);
  EXPECT_EQ(p.processes[k.process], (model::ProcessInfo{"", 1230493, "./saxpy-mpi-cuda"}));
  // nvtx_sum of this file lists MPI:MPI_Init, MPI:MPI_Send, MPI:MPI_Recv, MPI:MPI_Finalize and
  // :saxpy (5 instances); only the saxpy ranges enclose the kernels' launches.
  for (const auto* l : kernels) EXPECT_EQ(test::stage_of(p, *l), "saxpy");
  ASSERT_EQ(p.stage_ranges.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(test::stage_of(p, *kernels[i]), model::push_pop_path(p.stages[p.stage_ranges[i].stage]));
    EXPECT_EQ(p.stage_ranges[i].start_ns, *kernels[i]->start_ns);
    EXPECT_EQ(p.stage_ranges[i].end_ns - *kernels[i]->start_ns, *kernels[i]->duration_ns);
  }
  const model::Device* d = p.find_device(0);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(d->cc, "8.0");
  EXPECT_EQ(d->sm_count, 108);
  EXPECT_EQ(d->sm_clock_max_hz, 1.41e9);
  EXPECT_EQ(d->memory_total_bytes, 42297524224);
  EXPECT_EQ(d->l2_cache_bytes, 41943040);
  EXPECT_EQ(d->max_threads_per_sm, 2048);
  EXPECT_EQ(d->max_shared_memory_per_sm_bytes, 167936);
}

TEST(NsysSqlite, SaxpyMemoryCopiesWithoutTheEnumTable) {
  // Schema 2.9.1 has no ENUM_CUDA_MEMCPY_OPER: copyKind is CUPTI's memcpy kind.
  auto r = read_fixture("nsys/saxpy-mpi-cuda_nsys2022.2.sqlite");
  ASSERT_TRUE(r.status.ok());
  std::map<std::string, std::pair<int, std::int64_t>> copies;
  for (const auto& l : r.profile.launches) {
    if (l.kind != model::LaunchKind::kMemcpy) continue;
    auto& c = copies[r.profile.names[l.name]];
    ++c.first;
    c.second += l.bytes;
  }
  EXPECT_EQ(copies, (std::map<std::string, std::pair<int, std::int64_t>>{
                        {"[CUDA memcpy Device-to-Host]", {5, 5 * 262144000LL}},
                        {"[CUDA memcpy Host-to-Device]", {10, 10 * 262144000LL}}}));
}

TEST(NsysSqlite, FileAndBytesReadTheSame) {
  const std::string path = test::fixture("nsys/saxpy-mpi-cuda_nsys2022.2.sqlite");
  model::Profile from_file;
  from_file.inputs.push_back(model::InputInfo{path, model::InputFormat::kNsysSqlite, "", {}, {}});
  ingest::ReadContext ctx{path, from_file, 0, {}};
  ASSERT_TRUE(ingest::read_nsys_sqlite_file(path, 1613824, ctx).ok());
  auto from_bytes = read_bytes(fixture_bytes("nsys/saxpy-mpi-cuda_nsys2022.2.sqlite"));
  ASSERT_EQ(from_file.launches.size(), from_bytes.profile.launches.size());
  for (std::size_t i = 0; i < from_file.launches.size(); ++i) {
    EXPECT_EQ(from_file.launches[i].start_ns, from_bytes.profile.launches[i].start_ns);
    EXPECT_EQ(from_file.launches[i].stage, from_bytes.profile.launches[i].stage);
  }
}

TEST(NsysSqlite, LlamaFixtureTotalsEqualTheSourceTrace) {
  // Sums over the source, llama_stages_trace.json.gz (PyTorch profiler, H100): 5592 kernel
  // events, 14,705,478 ns; by the record_function range around each kernel's launch call:
  // prefill 342 / 1,698,964 ns, decode 5250 / 13,006,514 ns; 9 memsets, 6,848 ns, 36 bytes.
  auto r = read_fixture("nsys/llama_stages.sqlite");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const auto& p = r.profile;
  EXPECT_EQ(warnings(p), "");
  std::map<std::string, std::pair<std::uint64_t, double>> by_stage;
  std::uint64_t memsets = 0;
  double memset_ns = 0;
  std::int64_t memset_bytes = 0;
  for (const auto& l : p.launches) {
    if (l.kind == model::LaunchKind::kMemset) {
      ++memsets;
      memset_ns += *l.duration_ns;
      memset_bytes += l.bytes;
      continue;
    }
    auto& s = by_stage[test::stage_of(p, l)];
    s.first += l.count;
    s.second += *l.total_duration_ns();
  }
  EXPECT_EQ(by_stage, (std::map<std::string, std::pair<std::uint64_t, double>>{
                          {"decode", {5250, 13006514}}, {"prefill", {342, 1698964}}}));
  EXPECT_EQ(memsets, 9u);
  EXPECT_EQ(memset_ns, 6848);
  EXPECT_EQ(memset_bytes, 36);
  EXPECT_EQ(p.names.size(), 36u + 1);  // 36 kernels and "[CUDA memset]"
  // The GPU extents agree with Kineto's own gpu_user_annotation spans of the same ranges
  // (11,089,198 and 153,944,405 ns, rounded through microseconds) to 2 ns.
  ASSERT_EQ(p.stage_ranges.size(), 2u);
  EXPECT_EQ(p.stage_ranges[0].end_ns - p.stage_ranges[0].start_ns, 11089196);
  EXPECT_EQ(p.stage_ranges[1].end_ns - p.stage_ranges[1].start_ns, 153944403);
  const model::Device* d = p.find_device(0);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d->cc, "9.0");
  EXPECT_EQ(d->sm_count, 132);
}

// ---- NVTX attribution on built exports ----------------------------------------------------

TEST(NsysSqlite, RangeThatNeverEndsWarnsAndEndsWithTheTrace) {
  auto r = read_bytes(database(std::string(kExport) + kernel(1, 10, 100, 200) +
                               kernel(2, 300, 400, 900) + nvtx(0, "NULL", 59, "'decode'")));
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  for (const auto& l : r.profile.launches) EXPECT_EQ(test::stage_of(r.profile, l), "decode");
  EXPECT_EQ(warnings(r.profile),
            "NVTX range 'decode' never ends: it is taken to end with the trace, at 900 ns\n");
  ASSERT_EQ(r.profile.stage_ranges.size(), 1u);
  EXPECT_EQ(r.profile.stage_ranges[0].start_ns, 100);
  EXPECT_EQ(r.profile.stage_ranges[0].end_ns, 900);
}

TEST(NsysSqlite, DomainsStartEndRangesAndRegisteredStrings) {
  // Domain 1 is created as "llm" (a registered string); a push/pop range in it named by textId;
  // a start/end range on the same thread; a start/end range that ends on another thread.
  auto r =
      read_bytes(database(std::string(kExport) + kernel(1, 20, 100, 110) + kernel(2, 60, 120, 130) +
                          nvtx(0, "NULL", 75, "NULL", "2", "1") + nvtx(0, "1000", 59, "'step'") +
                          nvtx(10, "50", 59, "NULL", "3", "1") + nvtx(5, "70", 60, "'io'") +
                          nvtx(5, "70", 60, "'handoff'", "NULL", "0", std::to_string(kTid + 1))));
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const auto& p = r.profile;
  ASSERT_EQ(p.launches.size(), 2u);
  EXPECT_EQ(test::stage_of(p, p.launches[0]), "step/llm@attention [io]");
  EXPECT_EQ(test::stage_of(p, p.launches[1]), "step [io]");
  EXPECT_EQ(p.launches[0].thread_id, 8);
  EXPECT_EQ(warnings(p),
            "1 NVTX ranges end on another thread than the one they start on; like Nsight "
            "Systems' GPU projection, kernlens attributes no kernel to them\n");
}

TEST(NsysSqlite, EventTypesByNameFromTheEnumTable) {
  // Here push/pop ranges are type 1000; type 59 means something else and is not a range.
  auto r = read_bytes(database(
      std::string(kExport) +
      "CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);"
      "INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (1000, 'NvtxPushPopRange', NULL), (59, 'Other', "
      "NULL);" +
      kernel(1, 20, 100, 110) + nvtx(0, "100", 1000, "'prefill'") +
      nvtx(0, "100", 59, "'not a range'")));
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  EXPECT_EQ(test::stage_of(r.profile, r.profile.launches[0]), "prefill");
}

TEST(NsysSqlite, KernelWithoutItsApiCallIsOutsideEveryRange) {
  auto r =
      read_bytes(database(std::string(kExport) + kernel(1, 20, 100, 110) +
                          "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (200, 210, 0, 7, 99, " +
                          std::to_string(kPid) + ", 1, 1);" + nvtx(0, "1000", 59, "'step'")));
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(test::stage_of(r.profile, r.profile.launches[1]), "");
  EXPECT_EQ(r.profile.launches[1].thread_id, model::kUnknown);
  EXPECT_NE(warnings(r.profile).find("1 kernels have no CUDA API call with their correlation id"),
            std::string::npos);
}

TEST(NsysSqlite, MemcpyNamesFromTheEnumTable) {
  auto r = read_bytes(database(
      std::string(kExport) + kernel(1, 20, 100, 110) +
      "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, "
      "bytes INTEGER,"
      " copyKind INTEGER);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (0, 10, 4096, 1), (20, 30, 16, 42);"
      "CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);"
      "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (1, 'CUDA_MEMCPY_OPER_HTOD', 'Host-to-Device');"));
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  ASSERT_EQ(r.profile.launches.size(), 3u);
  EXPECT_EQ(r.profile.names[r.profile.launches[1].name], "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(r.profile.launches[1].bytes, 4096);
  EXPECT_EQ(r.profile.names[r.profile.launches[2].name], "[CUDA memcpy kind 42]");
}

// ---- bad input -----------------------------------------------------------------------------

void expect_error(const std::string& bytes, const std::string& message) {
  auto r = read_bytes(bytes, "in.sqlite");
  ASSERT_FALSE(r.status.ok()) << message;
  EXPECT_NE(r.status.error().message.find(message), std::string::npos) << r.status.error().message;
  EXPECT_EQ(r.status.error().file, "in.sqlite");
}

TEST(NsysSqlite, NotAnNsysExport) {
  expect_error(fixture_bytes("nsys/not_an_nsys_export.sqlite"),
               "an SQLite database, but not an Nsight Systems export: it has none of the tables");
}

TEST(NsysSqlite, ExportWithoutKernelTableNamesIt) {
  expect_error(database("CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
                        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.20.3');"
                        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"),
               "no table CUPTI_ACTIVITY_KIND_KERNEL (export schema 3.20.3): the report holds no "
               "CUDA kernels");
}

TEST(NsysSqlite, MissingColumnsAndEmptyTables) {
  expect_error(
      database("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
               "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, demangledName INTEGER);"),
      "table CUPTI_ACTIVITY_KIND_KERNEL has no column 'end'");
  expect_error(database("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
                        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER);"),
               "has none of the name columns demangledName, shortName, mangledName");
  expect_error(database(kExport), "table CUPTI_ACTIVITY_KIND_KERNEL holds no kernels");
  expect_error(database("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER);"),
               "no table StringIds");
}

TEST(NsysSqlite, BadRowsNameTheirTableAndRow) {
  expect_error(database(std::string(kExport) + kernel(1, 0, 100, 110) + kernel(2, 0, 300, 200)),
               "CUPTI_ACTIVITY_KIND_KERNEL row 2: ends (200 ns) before it starts (300 ns)");
  expect_error(database(std::string(kExport) + kernel(1, 0, 100, 4611686018427387904LL)),
               "CUPTI_ACTIVITY_KIND_KERNEL row 1: time out of range");
  expect_error(
      database(std::string(kExport) +
               "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, 1, 0, 7, 1, 0, 77, 78);"),
      "CUPTI_ACTIVITY_KIND_KERNEL row 1: no kernel name in StringIds");
  // A launch keeps CUPTI's 32-bit stream id: a wider one is an error, not a wrapped number.
  expect_error(
      database(std::string(kExport) + kernel(1, 0, 100, 110) +
               "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (200, 210, 0, 4294967296, 2, 0, 1, 1);"),
      "CUPTI_ACTIVITY_KIND_KERNEL row 2: streamId 4294967296 needs more than CUPTI's 32 bits");
}

TEST(NsysSqlite, TruncatedAndDamagedFiles) {
  std::string saxpy = fixture_bytes("nsys/saxpy-mpi-cuda_nsys2022.2.sqlite");
  expect_error(
      saxpy.substr(0, saxpy.size() / 2),
      "the SQLite file is truncated: its header declares 1613824 bytes, the file has 806912");
  expect_error(std::string("SQLite format 3\0garbage", 23), "cannot read the SQLite database (");
  // A page in the middle overwritten: SQLite reports the damage, the reader names the table.
  std::string damaged = saxpy;
  std::fill(damaged.begin() + 4096 * 60, damaged.begin() + 4096 * 200, '\x5a');
  auto r = read_bytes(damaged, "in.sqlite");
  if (!r.status.ok()) {
    EXPECT_NE(r.status.error().message.find("damaged"), std::string::npos);
  }
}

// The kernel table's parts: four a thread, and more where those would be longer than
// kMostRowsAPart rows, so that the last ones end close together.
TEST(NsysKernelParts, FourAThreadAndNoneLongerThanTheMostRows) {
  using ingest::nsys::kernel_part_count;
  using ingest::nsys::kMostRowsAPart;
  EXPECT_EQ(kernel_part_count(2, 5592), 8u);            // the llama fixture
  EXPECT_EQ(kernel_part_count(16, 1'000'000), 64u);     // 15,625 rows a part
  EXPECT_EQ(kernel_part_count(16, 64 * kMostRowsAPart), 64u);
  EXPECT_EQ(kernel_part_count(16, 64 * kMostRowsAPart + 1), 65u);
  EXPECT_EQ(kernel_part_count(16, 8'000'000), 245u);    // 32,653 rows a part
  EXPECT_EQ(kernel_part_count(2, 8'000'000), 245u);
  for (std::uint64_t rows : {1'000'000ull, 8'000'000ull, 123'456'789ull})
    EXPECT_LE((rows + kernel_part_count(16, rows) - 1) / kernel_part_count(16, rows), kMostRowsAPart) << rows;
}

// A range's rows: rising inside [first, end); the first rowid at or past the end ends them, as
// SQL's `rowid < end` stops a scan there; one below the first, or not above the one before, is
// damage (the table is read again in one scan).
TEST(NsysRowidOrder, RowsRiseInsideTheRangeAndTheFirstPastItsEndEndsIt) {
  using Row = ingest::nsys::RowidOrder::Row;
  ingest::nsys::RowidOrder order(10, 20);
  EXPECT_EQ(order.next(10), Row::kInOrder);
  EXPECT_EQ(order.next(12), Row::kInOrder);  // gaps are allowed
  EXPECT_EQ(order.next(19), Row::kInOrder);
  EXPECT_EQ(order.next(20), Row::kPastTheEnd);
  EXPECT_EQ(order.next(500), Row::kPastTheEnd);

  ingest::nsys::RowidOrder falls(10, 20);
  EXPECT_EQ(falls.next(15), Row::kInOrder);
  EXPECT_EQ(falls.next(15), Row::kOutOfOrder);  // a rowid twice
  ingest::nsys::RowidOrder back(10, 20);
  EXPECT_EQ(back.next(15), Row::kInOrder);
  EXPECT_EQ(back.next(11), Row::kOutOfOrder);
  ingest::nsys::RowidOrder below(10, 20);
  EXPECT_EQ(below.next(9), Row::kOutOfOrder);  // a seek lands at or after the first
  ingest::nsys::RowidOrder past_first(10, 20);
  EXPECT_EQ(past_first.next(25), Row::kPastTheEnd);  // an empty range
}

// The call of each operation, whether the API rows come in key order and in time order on
// each thread (kept as they come) or not (read whole and sorted): the same calls, the inner one
// of a launch recorded twice, none for an operation without a row, the same ranges around each.
TEST(NsysApiCalls, RowsInOrderOrNotGiveTheSameCalls) {
  using ingest::nsys::ApiRow;
  const std::int64_t process = std::int64_t{4242} << 24, other = std::int64_t{77} << 24;
  const std::vector<ApiRow> in_order = {
      {process | 1, 10, 100, 200},  // correlation 10: cudaLaunchKernel ...
      {process | 1, 10, 110, 190},  // ... wrapping cudaLaunchKernel_v7000: the inner call
      {process | 2, 11, 300, 320},
      {process | 1, 13, 400, 420},  // no operation of its own
      {other | 5, 10, 500, 530},    // another process's correlation 10
  };
  // Thread 1 of the process: "step" [0, 450) around "layer" [105, 195).
  const std::vector<ingest::RangeInstance> ranges = {
      {process | 1, 105, 195, model::NvtxRange{"", "layer", model::RangeKind::kPushPop}},
      {process | 1, 0, 450, model::NvtxRange{"", "step", model::RangeKind::kPushPop}}};
  auto match = [&](const std::vector<ApiRow>& rows, bool kept_in_order) {
    ingest::nsys::ApiCalls calls = ingest::nsys::api_calls_of(rows, ranges);
    EXPECT_EQ(calls.kept_in_order(), kept_in_order);
    const std::vector<ingest::RangeSet> sets = calls.take_sets();
    std::map<int, std::string> call_of;  // operation -> "tid ranges"
    int op = 0;
    for (auto [pid, correlation] : {std::pair{process, std::int64_t{11}}, {process, 10}, {process, 12}, {other, 10}, {std::int64_t{9} << 24, 10}}) {
      auto entry = calls.find(pid, correlation);
      std::string& out = call_of[op++];
      if (!entry || *entry == ingest::nsys::ApiCalls::kNoCall) {
        out = entry ? "none" : "no key";
        continue;
      }
      const auto& place = calls.place(*entry);
      out = std::to_string(ingest::nsys::tid_of(place.thread));
      for (auto r : sets[place.set]) out += " " + ranges[r].range.name;
    }
    EXPECT_FALSE(calls.find(process, std::int64_t{1} << 40).has_value());  // no key: beyond 32 bits
    return call_of;
  };
  const std::map<int, std::string> expected = {
      {0, "2"}, {1, "1 step layer"}, {2, "none"}, {3, "5"}, {4, "none"}};
  EXPECT_EQ(match(in_order, true), expected);
  std::vector<ApiRow> shuffled = {in_order[4], in_order[2], in_order[1], in_order[3], in_order[0]};
  EXPECT_EQ(match(shuffled, false), expected);
  std::vector<ApiRow> with_a_keyless_row = in_order;
  with_a_keyless_row.insert(with_a_keyless_row.begin() + 2, {process | 1, std::int64_t{1} << 40, 0, 1});
  EXPECT_EQ(match(with_a_keyless_row, true), expected);
  // Keys in order, but thread 1 goes back in time: the rows are read whole.
  std::vector<ApiRow> back_in_time = in_order;
  back_in_time[3].start = 50;
  back_in_time[3].end = 60;
  EXPECT_EQ(match(back_in_time, false), expected);
}

// A call's rank orders the calls of its thread by (start, end), on either path.
TEST(NsysApiCalls, RankIsTheCallsPlaceInTimeOnItsThread) {
  using ingest::nsys::ApiRow;
  const std::int64_t t1 = (std::int64_t{7} << 24) | 1, t2 = (std::int64_t{7} << 24) | 2;
  for (bool sorted : {true, false}) {
    std::vector<ApiRow> rows = {{t1, 1, 10, 20}, {t2, 2, 12, 13}, {t1, 3, 30, 40}, {t2, 4, 50, 60}};
    if (!sorted) std::swap(rows[0].correlation, rows[2].correlation);  // correlation 1 is now the later call
    ingest::nsys::ApiCalls calls = ingest::nsys::api_calls_of(rows, {});
    EXPECT_EQ(calls.kept_in_order(), sorted);
    auto rank = [&](std::int64_t correlation) { return calls.rank(*calls.find(t1, correlation)); };
    if (sorted) {
      EXPECT_LT(rank(1), rank(3));
    } else {
      EXPECT_GT(rank(1), rank(3));
    }
  }
}

// Everything of `calls` that attribution reads: each entry's key and place, the places in the
// order they were numbered, the sets and the latest end.
std::string describe(ingest::nsys::ApiCalls calls) {
  std::string out = fmt::format("{} entries, latest end {}\n", calls.size(), calls.latest_end_ns());
  for (std::uint32_t e = 0; e < calls.size(); ++e) out += fmt::format("{:x}:{} ", calls.key_of(e), calls.place_index(e));
  out += "\nplaces";
  for (const auto& p : calls.places()) out += fmt::format(" {:x}/{}", p.thread, p.set);
  out += "\nsets";
  for (const auto& set : calls.take_sets()) out += fmt::format(" [{}]", fmt::join(set, ","));
  return out;
}

// Random runtime rows as an export holds them: a few processes with a thread or two each, the
// correlation ids rising by 0-2 (0: a launch recorded twice, inner or outer call second), now
// and then a keyless row, each thread's calls rising in time; and, in some trials, one row
// that breaks the order (a process seen again later, a call back in time, a key that falls).
// NVTX ranges around stretches of each thread's calls, some nested.
struct RandomCalls {
  std::vector<ingest::nsys::ApiRow> rows;
  std::vector<ingest::RangeInstance> ranges;
};
RandomCalls random_calls(std::mt19937& random) {
  auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  RandomCalls out;
  const int processes = 1 + pick(3);
  std::map<std::int64_t, std::int64_t> clock;  // by thread
  std::int64_t correlation = 1 + pick(5);
  for (int p = 0; p < processes; ++p) {
    const std::int64_t pid = std::int64_t{100 + pick(50)} << 24, threads = 1 + pick(2);
    const int calls = 1 + pick(40);
    for (int c = 0; c < calls; ++c) {
      const std::int64_t tid = pid | (1 + pick(static_cast<int>(threads)));
      std::int64_t& now = clock[tid];
      if (pick(20) == 0) {
        out.rows.push_back({tid, std::int64_t{1} << 40, now, now + 1});  // no key
        continue;
      }
      const int step = pick(6);
      correlation += step < 2 ? 0 : step < 5 ? 1 : 2;
      const std::int64_t start = now + pick(4), end = start + 1 + pick(30);
      out.rows.push_back({tid, correlation, start, end});
      now = start + (pick(30) == 0 ? 0 : 1 + pick(8));  // now and then the next call starts with this one
    }
    if (pick(3) == 0) correlation = pick(10);  // the next process's ids begin again
  }
  if (pick(4) == 0 && out.rows.size() > 2) {
    auto& row = out.rows[1 + static_cast<std::size_t>(pick(static_cast<int>(out.rows.size()) - 1))];
    switch (pick(3)) {
      case 0: row.global_tid = out.rows.front().global_tid; break;  // the first process again
      case 1: row.start = row.end = -5; break;                       // back in time
      default: row.correlation = 0; break;                           // a key that falls
    }
  }
  for (const auto& [tid, now] : clock) {
    for (int r = pick(4); r > 0; --r) {
      const std::int64_t start = pick(static_cast<int>(now) + 5), end = start + pick(60);
      out.ranges.push_back({tid, start, pick(8) == 0 ? std::numeric_limits<std::int64_t>::max() : end,
                            model::NvtxRange{"", fmt::format("r{}", r), model::RangeKind::kPushPop}});
    }
  }
  return out;
}

// The calls kept in rowid ranges, each range's kept on its own thread and renumbered by the
// one builder, are the calls one scan keeps: the same entries, places numbered in the same
// order, the same sets and latest end; and where one scan finds the rows out of order, so do
// the ranges, wherever they are cut.
TEST(NsysApiCalls, KeptInRangesAsInOneScan) {
  std::mt19937 random(22);
  int in_order = 0, not_in_order = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const RandomCalls input = random_calls(random);
    const auto one_scan = ingest::nsys::api_calls_kept_in_order(input.rows, input.ranges, 0);
    ++(one_scan ? in_order : not_in_order);
    for (std::size_t stretch : {1, 2, 3, 5, 8, 13, 64}) {
      const auto in_ranges = ingest::nsys::api_calls_kept_in_order(input.rows, input.ranges, stretch);
      ASSERT_EQ(in_ranges.has_value(), one_scan.has_value()) << "trial " << trial << ", ranges of " << stretch;
      if (one_scan) {
        ASSERT_EQ(describe(*in_ranges), describe(*one_scan)) << "trial " << trial << ", ranges of " << stretch;
      }
    }
  }
  // Both kinds of input came up often enough to mean something.
  EXPECT_GT(in_order, 150);
  EXPECT_GT(not_in_order, 50);
}

}  // namespace
}  // namespace kernlens
