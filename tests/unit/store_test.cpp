// The run database: schema and migrations, idempotent and atomic ingest, several writers at
// once, damaged and foreign files, injection through values, read-only queries, the views.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "kernlens/load/load.h"
#include "kernlens/store/database.h"
#include "kernlens/store/query.h"
#include "kernlens/load/run_record.h"
#include "kernlens/store/schema.h"
#include "synthetic_runs.h"
#include "test_util.h"

namespace kernlens {
namespace {

using store::IngestOutcome;

model::RunRecord read_example(const std::string& name, const rundir::Tags& tags = {}) {
  auto run = load::load_run_record(test::example_run(name), tags, test::builtin_classifier());
  EXPECT_TRUE(run.ok()) << (run.ok() ? "" : run.error().to_string());
  return run.ok() ? std::move(run).value() : model::RunRecord{};
}

std::int64_t count(const SqliteDb& db, const std::string& sql) {
  auto stmt = db.prepare(sql);
  EXPECT_TRUE(stmt.ok()) << (stmt.ok() ? "" : stmt.error().message);
  if (!stmt.ok() || !stmt->step()) return -1;
  return stmt->int64(0);
}

std::int64_t count_in_file(const std::string& path, const std::string& sql) {
  auto db = store::open_for_reading(path);
  EXPECT_TRUE(db.ok()) << (db.ok() ? "" : db.error().to_string());
  return db.ok() ? count(*db, sql) : -1;
}

std::string integrity(const std::string& path) {
  auto db = store::open_for_reading(path);
  if (!db) return db.error().to_string();
  auto t = store::run_query(*db, "PRAGMA integrity_check");
  if (!t || t->rows.empty()) return "no answer";
  return std::get<std::string>(t->rows[0][0]);
}

TEST(Store, CreatesTheSchemaAtTheLastVersion) {
  test::TempDir dir;
  auto db = store::open_for_writing(dir.file("runs.db"));
  ASSERT_TRUE(db.ok()) << db.error().to_string();
  EXPECT_EQ(count(*db, "PRAGMA user_version"), store::schema_version());
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM schema_migrations"), static_cast<std::int64_t>(store::migrations().size()));
  auto mode = db->prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.ok() && mode->step());
  EXPECT_EQ(mode->text(0), "wal");
}

TEST(Store, MigratesAnOlderSchema) {
  test::TempDir dir;
  std::string path = dir.file("old.db");
  {
    auto raw = SqliteDb::open_writable(path, 1000);
    ASSERT_TRUE(raw.ok());
    const auto& first = store::migrations().front();
    ASSERT_TRUE(raw->exec(std::string(first.sql)).ok());
    ASSERT_TRUE(raw->exec("INSERT INTO schema_migrations (version, description) VALUES (1, 'v1')").ok());
    ASSERT_TRUE(raw->exec("PRAGMA user_version = 1").ok());
  }
  auto refused = store::open_for_reading(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("older"), std::string::npos);
  ASSERT_TRUE(store::open_for_writing(path).ok());
  EXPECT_EQ(count_in_file(path, "PRAGMA user_version"), store::schema_version());
  EXPECT_EQ(count_in_file(path, "SELECT COUNT(*) FROM v_kernel_popularity"), 0);
}

TEST(Store, IngestIsIdempotentAndRoundTrips) {
  test::TempDir dir;
  auto db = store::open_for_writing(dir.file("runs.db"));
  ASSERT_TRUE(db.ok());
  model::RunRecord run = read_example("llama_prefill", {{"owner", "perf-team"}});
  ASSERT_FALSE(run.kernels.empty());
  auto first = store::ingest_run(*db, run);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(*first, IngestOutcome::kAdded);
  auto again = store::ingest_run(*db, read_example("llama_prefill", {{"owner", "perf-team"}}));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, IngestOutcome::kAlreadyPresent);
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM kernels"), static_cast<std::int64_t>(run.kernels.size()));

  auto loaded = store::load_run(*db, run.meta.run_key.substr(0, 6));
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->meta.model, "llama");
  EXPECT_EQ(loaded->meta.batch, run.meta.batch);
  EXPECT_EQ(loaded->meta.command, run.meta.command);
  ASSERT_EQ(loaded->kernels.size(), run.kernels.size());
  for (std::size_t i = 0; i < run.kernels.size(); ++i) {
    EXPECT_EQ(loaded->kernels[i].name, run.kernels[i].name);
    EXPECT_EQ(loaded->kernels[i].grid, run.kernels[i].grid);
    EXPECT_EQ(loaded->kernels[i].total_ns, run.kernels[i].total_ns);
    EXPECT_EQ(loaded->kernels[i].l2_hit_pct, run.kernels[i].l2_hit_pct);
    EXPECT_EQ(loaded->kernels[i].bottleneck, run.kernels[i].bottleneck);
  }
  ASSERT_EQ(loaded->stages.size(), run.stages.size());
  EXPECT_EQ(loaded->stages[0].kernel_time_ns, run.stages[0].kernel_time_ns);
  EXPECT_NE(std::find(loaded->meta.tags.begin(), loaded->meta.tags.end(),
                      std::pair<std::string, std::string>{"owner", "perf-team"}),
            loaded->meta.tags.end());
}

TEST(Store, LoadRunRefusesAnAmbiguousPrefix) {
  test::TempDir dir;
  auto db = store::open_for_writing(dir.file("runs.db"));
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(store::ingest_run(*db, test::synthetic_run(1, 5)).ok());
  ASSERT_TRUE(store::ingest_run(*db, test::synthetic_run(2, 5)).ok());
  auto both = store::load_run(*db, "synthetic-");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("several runs"), std::string::npos);
  EXPECT_FALSE(store::load_run(*db, "nothing-like-it").ok());
  EXPECT_TRUE(store::load_run(*db, "2").ok());  // run_id
}

TEST(Store, AFailedIngestLeavesNothing) {
  test::TempDir dir;
  auto db = store::open_for_writing(dir.file("runs.db"));
  ASSERT_TRUE(db.ok());
  store::IngestOptions failing;
  failing.before_commit = [] { return Status(make_error("", 0, "injected failure")); };
  auto failed = store::ingest_run(*db, test::synthetic_run(7, 50), failing);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "injected failure");
  for (const char* table : {"runs", "kernels", "stages", "run_tags", "devices"}) {
    EXPECT_EQ(count(*db, std::string("SELECT COUNT(*) FROM ") + table), 0) << table;
  }
  auto retried = store::ingest_run(*db, test::synthetic_run(7, 50));
  ASSERT_TRUE(retried.ok());
  EXPECT_EQ(*retried, IngestOutcome::kAdded);
}

// A process killed inside the transaction (all rows written, no COMMIT) leaves the run absent
// and the file sound; the next ingest of the same run adds it.
TEST(Store, AKilledIngestLeavesTheRunAbsent) {
  test::TempDir dir;
  std::string path = dir.file("runs.db");
  ASSERT_TRUE(store::open_for_writing(path).ok());
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto db = store::open_for_writing(path);
    store::IngestOptions dying;
    dying.before_commit = [] {
      raise(SIGKILL);
      return ok_status();
    };
    if (db) (void)store::ingest_run(*db, test::synthetic_run(3, 400), dying);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(integrity(path), "ok");
  EXPECT_EQ(count_in_file(path, "SELECT COUNT(*) FROM runs"), 0);
  EXPECT_EQ(count_in_file(path, "SELECT COUNT(*) FROM kernels"), 0);
  auto db = store::open_for_writing(path);
  ASSERT_TRUE(db.ok());
  auto added = store::ingest_run(*db, test::synthetic_run(3, 400));
  ASSERT_TRUE(added.ok()) << added.error().message;
  EXPECT_EQ(*added, IngestOutcome::kAdded);
}

// Several processes create and fill one database at once, each with its own runs and one run
// they all ingest: every run is there once, and the file is sound.
TEST(Store, ConcurrentIngestsFromSeveralProcesses) {
  test::TempDir dir;
  std::string path = dir.file("runs.db");
  constexpr int kProcesses = 4, kRunsEach = 6;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // A failing child says why on stderr (the parent only sees its exit code).
      auto db = store::open_for_writing(path);
      if (!db) {
        std::fprintf(stderr, "child %d: open: %s\n", p, db.error().to_string().c_str());
        _exit(1);
      }
      for (int r = -1; r < kRunsEach; ++r) {
        auto run = test::synthetic_run(r < 0 ? 999 : static_cast<std::uint64_t>(p * 100 + r), 100);
        if (auto outcome = store::ingest_run(*db, run); !outcome) {
          std::fprintf(stderr, "child %d: ingest %d: %s\n", p, r, outcome.error().to_string().c_str());
          _exit(1);
        }
      }
      _exit(0);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(integrity(path), "ok");
  EXPECT_EQ(count_in_file(path, "SELECT COUNT(*) FROM runs"), kProcesses * kRunsEach + 1);
  EXPECT_EQ(count_in_file(path, "SELECT COUNT(*) FROM kernels"), (kProcesses * kRunsEach + 1) * 100);
  EXPECT_EQ(count_in_file(path, "SELECT COUNT(*) FROM devices"), 1);
}

TEST(Store, RefusesAFileThatIsNotSqlite) {
  test::TempDir dir;
  dir.write("notes.db", "these are my notes, not a database\n");
  for (auto open : {&store::open_for_writing, &store::open_for_reading}) {
    auto db = open(dir.file("notes.db"));
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.error().file, dir.file("notes.db"));
    EXPECT_NE(db.error().message.find("not an SQLite file"), std::string::npos) << db.error().message;
  }
  EXPECT_TRUE(test::file_text(dir.file("notes.db")) == "these are my notes, not a database\n");
}

TEST(Store, RefusesAForeignSqliteDatabaseAndLeavesItAlone) {
  test::TempDir dir;
  std::string path = dir.file("nsys.sqlite");
  std::filesystem::copy_file(test::fixture("nsys/llama_stages.sqlite"), path);
  std::string before = test::file_text(path);
  auto db = store::open_for_writing(path);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.error().message.find("not a kernlens database"), std::string::npos) << db.error().message;
  EXPECT_TRUE(test::file_text(path) == before) << "the foreign file was changed";
}

// A foreign database whose tables have our names is refused before anything in it changes:
// not even the switch to WAL mode (header bytes 18-19), which is a write.
TEST(Store, RefusesAForeignDatabaseWithOurTableNamesAndLeavesItAlone) {
  for (const char* table : {"devices", "runs", "kernels", "stages", "run_tags"}) {
    test::TempDir dir;
    std::string path = dir.file("la.db");
    {
      auto foreign = SqliteDb::open_writable(path, 1000);
      ASSERT_TRUE(foreign.ok());
      ASSERT_TRUE(foreign->exec(std::string("CREATE TABLE ") + table + " (id INTEGER, note TEXT)").ok());
    }
    std::string before = test::file_text(path);
    auto db = store::open_for_writing(path);
    ASSERT_FALSE(db.ok()) << table;
    EXPECT_NE(db.error().message.find("not a kernlens database"), std::string::npos) << db.error().message;
    EXPECT_TRUE(test::file_text(path) == before) << table << ": the foreign file was changed";
    EXPECT_FALSE(std::filesystem::exists(path + "-wal")) << table;
    EXPECT_FALSE(store::open_for_reading(path).ok()) << table;
  }
}

TEST(Store, RefusesADatabaseOfANewerKernlens) {
  test::TempDir dir;
  std::string path = dir.file("runs.db");
  {
    auto db = store::open_for_writing(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec("PRAGMA user_version = 99").ok());
  }
  auto db = store::open_for_writing(path);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.error().message.find("newer kernlens"), std::string::npos) << db.error().message;
}

TEST(Store, ADamagedFileGivesAnErrorNotACrash) {
  test::TempDir dir;
  std::string path = dir.file("runs.db");
  {
    auto db = store::open_for_writing(path);
    ASSERT_TRUE(db.ok());
    for (std::uint64_t seed = 0; seed < 5; ++seed) ASSERT_TRUE(store::ingest_run(*db, test::synthetic_run(seed, 200)).ok());
  }
  std::string bytes = test::file_text(path);
  ASSERT_GT(bytes.size(), 16384u);
  for (std::size_t i = 8192; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xA5);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  // Page 1 (the schema) is intact: opening works; reading the damaged pages fails cleanly.
  auto db = store::open_for_reading(path);
  if (!db.ok()) {
    EXPECT_EQ(db.error().file, path);
    return;
  }
  auto t = store::run_query(*db, "SELECT SUM(total_ns) FROM kernels");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("malformed"), std::string::npos) << t.error().message;
}

TEST(Store, ValuesNeverBecomeSql) {
  test::TempDir dir;
  auto db = store::open_for_writing(dir.file("runs.db"));
  ASSERT_TRUE(db.ok());
  const std::string evil = "x'); DROP TABLE runs; --";
  auto run = test::synthetic_run(5, 3);
  run.meta.run_key = "run'\"; DELETE FROM kernels; --";
  run.meta.tags.emplace_back("note", evil);
  run.meta.model = evil;
  run.kernels[0].name = "void k<'\"\\>(); DROP TABLE kernels; --";
  ASSERT_TRUE(store::ingest_run(*db, run).ok());
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM kernels"), 3);
  auto loaded = store::load_run(*db, run.meta.run_key);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->meta.model, evil);
  EXPECT_EQ(loaded->kernels[0].name, run.kernels[0].name);
}

TEST(Store, QueriesAreReadOnly) {
  test::TempDir dir;
  std::string path = dir.file("runs.db");
  {
    auto db = store::open_for_writing(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(store::ingest_run(*db, test::synthetic_run(1, 10)).ok());
  }
  auto db = store::open_for_reading(path);
  ASSERT_TRUE(db.ok());
  for (const char* sql : {"DELETE FROM runs", "INSERT INTO run_tags VALUES (1, 'a', 'b')", "DROP TABLE kernels",
                          "UPDATE kernels SET total_ns = 0", "CREATE TABLE x (a)", "PRAGMA user_version = 7"}) {
    auto t = store::run_query(*db, sql);
    ASSERT_FALSE(t.ok()) << sql;
    EXPECT_NE(t.error().message.find("read-only"), std::string::npos) << sql << ": " << t.error().message;
  }
  auto two = store::run_query(*db, "SELECT 1; DELETE FROM runs");
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.error().message.find("one SQL statement"), std::string::npos);
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM kernels"), 10);
  EXPECT_EQ(count(*db, "PRAGMA user_version"), store::schema_version());
}

// The popularity view counts, for each family, the runs and models that use it: checked
// against the same count made from the records.
TEST(Store, PopularityViewOnTheExampleRuns) {
  test::TempDir dir;
  std::string path = dir.file("runs.db");
  std::vector<model::RunRecord> runs = {read_example("llama_prefill"), read_example("qwen_prefill")};
  auto gpt2 = load::load_run_record(test::fixture("ncu/gpt2_prefill_raw.csv"), {{"model", "gpt2"}}, test::builtin_classifier());
  ASSERT_TRUE(gpt2.ok());
  runs.push_back(std::move(gpt2).value());
  {
    auto db = store::open_for_writing(path);
    ASSERT_TRUE(db.ok());
    for (const auto& r : runs) ASSERT_TRUE(store::ingest_run(*db, r).ok());
  }
  std::map<std::string, std::set<std::string>> models_of;
  for (const auto& r : runs) {
    for (const auto& k : r.kernels) models_of[k.base_name].insert(r.meta.model);
  }
  auto db = store::open_for_reading(path);
  ASSERT_TRUE(db.ok());
  auto t = store::run_query(*db, "SELECT base_name, models, runs FROM v_kernel_popularity");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->rows.size(), models_of.size());
  for (const auto& row : t->rows) {
    const auto& base_name = std::get<std::string>(row[0]);
    EXPECT_EQ(std::get<std::int64_t>(row[1]), static_cast<std::int64_t>(models_of[base_name].size())) << base_name;
  }
  EXPECT_EQ(std::get<std::int64_t>(t->rows.front()[1]), 3);  // the most popular is in all three
  for (const auto& view : store::builtin_views()) {
    auto answer = store::run_query(*db, "SELECT * FROM " + std::string(view.view));
    EXPECT_TRUE(answer.ok()) << view.view;
  }
}

// The popularity view reads totals that ingest keeps; they must equal grouping every kernel
// row by family, for runs with and without a model and families seen twice in one run.
TEST(Store, PopularityTotalsEqualGroupingTheKernels) {
  test::TempDir dir;
  std::string path = dir.file("runs.db");
  {
    auto db = store::open_for_writing(path);
    ASSERT_TRUE(db.ok());
    for (std::uint64_t seed = 0; seed < 12; ++seed) {
      auto run = test::synthetic_run(seed, 60);
      if (seed % 4 == 0) run.meta.model.clear();
      if (seed == 5) run.kernels[3].total_ns.reset();
      ASSERT_TRUE(store::ingest_run(*db, run).ok());
    }
    ASSERT_TRUE(store::ingest_run(*db, read_example("llama_prefill")).ok());
  }
  auto db = store::open_for_reading(path);
  ASSERT_TRUE(db.ok());
  const std::string order = " ORDER BY base_name, library, op_class";
  auto kept = store::run_query(*db, "SELECT base_name, library, op_class, occurrences, runs, models, launches, "
                                    "total_ns, share_of_time FROM v_kernel_popularity" + order);
  auto grouped = store::run_query(*db,
      "SELECT k.base_name, k.library, k.op_class, COUNT(*), COUNT(DISTINCT k.run_id), "
      "COUNT(DISTINCT COALESCE(r.model, r.run_key)), SUM(k.launches), SUM(k.total_ns), "
      "SUM(k.total_ns) / (SELECT SUM(kernel_time_ns) FROM runs) FROM kernels k JOIN runs r USING (run_id) "
      "GROUP BY 1, 2, 3" + order);
  ASSERT_TRUE(kept.ok() && grouped.ok());
  ASSERT_EQ(kept->rows.size(), grouped->rows.size());
  for (std::size_t i = 0; i < kept->rows.size(); ++i) {
    for (std::size_t c = 0; c < 7; ++c) EXPECT_EQ(kept->rows[i][c], grouped->rows[i][c]) << i << ", " << c;
    for (std::size_t c = 7; c < 9; ++c) {  // sums of doubles: the order of additions differs
      const auto& a = kept->rows[i][c];
      const auto& b = grouped->rows[i][c];
      ASSERT_EQ(a.index(), b.index()) << i << ", " << c;  // both NULL, or both numbers
      if (const auto* expected = std::get_if<double>(&b)) {
        EXPECT_NEAR(std::get<double>(a), *expected, 1e-9 * std::abs(*expected)) << i << ", " << c;
      }
    }
  }
}

TEST(Store, SignalsFindWhatTheFiguresSay) {
  test::TempDir dir;
  std::string path = dir.file("runs.db");
  auto run = test::synthetic_run(1, 4);
  run.kernels[0].op_class = "gemm";
  run.kernels[0].achieved_flops_per_s = 100e12;
  run.kernels[0].peak_flops_per_s = 989e12;
  run.kernels[1].bottleneck = "memory";
  run.kernels[1].l2_hit_pct = 12;
  run.kernels[2].l2_hit_pct = 12;  // low L2 hit but not memory-bound: no signal
  run.kernels[2].bottleneck = "compute";
  {
    auto db = store::open_for_writing(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(store::ingest_run(*db, run).ok());
  }
  auto db = store::open_for_reading(path);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM v_signals WHERE signal = 'gemm_far_from_tensor_roof'"), 1);
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM v_signals WHERE signal = 'memory_bound_low_l2_hit'"), 1);
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM v_signals WHERE signal = 'launch_bound_stage'"), 1);  // decode 20% busy
}

// A multi-rank run (the HTA two-rank traces, one run): its ranks' rows equal the analysis's
// figures to the nanosecond, the straggler flag follows the role, and load_run gives them back.
TEST(Store, MultiRankRunKeepsEachRanksFigures) {
  const std::string r0 = test::fixture("multirank/hta_sendrecv_rank-0.json.gz");
  const std::string r1 = test::fixture("multirank/hta_sendrecv_rank-1.json.gz");
  auto run = load::load_run_record(r0 + "," + r1, {}, test::builtin_classifier());
  ASSERT_TRUE(run.ok()) << run.error().to_string();
  auto loaded = load::load({r0, r1}, test::builtin_classifier());
  ASSERT_TRUE(loaded.ok());
  const auto& ranks = loaded->analysis.ranks.ranks;
  ASSERT_EQ(ranks.size(), 2u);
  test::TempDir dir;
  auto db = store::open_for_writing(dir.file("runs.db"));
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(store::ingest_run(*db, *run).ok());
  auto t = store::run_query(*db, "SELECT rank, kernel_time_ns, comm_ns, exposed_comm_ns, straggler, role, launches "
                                 "FROM v_ranks ORDER BY rank");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->rows.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& row = t->rows[i];
    EXPECT_EQ(std::get<std::int64_t>(row[0]), ranks[i].rank);
    EXPECT_EQ(std::get<double>(row[1]), ranks[i].kernel_time_ns);
    EXPECT_EQ(std::get<double>(row[2]), ranks[i].comm.comm_ns);
    EXPECT_EQ(std::get<double>(row[3]), ranks[i].comm.exposed_ns());
    EXPECT_EQ(std::get<std::int64_t>(row[4]), ranks[i].role == analysis::RankRow::Role::kStraggler ? 1 : 0);
    EXPECT_EQ(std::get<std::string>(row[5]), analysis::role_name(ranks[i].role));
    EXPECT_EQ(std::get<std::int64_t>(row[6]), static_cast<std::int64_t>(ranks[i].launches));
  }
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM v_rank_stages"),
            static_cast<std::int64_t>(ranks[0].stages.size() + ranks[1].stages.size()));
  auto back = store::load_run(*db, run->meta.run_key);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->ranks.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back->ranks[i].kernel_time_ns, run->ranks[i].kernel_time_ns);
    EXPECT_EQ(back->ranks[i].exposed_comm_ns, run->ranks[i].exposed_comm_ns);
    EXPECT_EQ(back->ranks[i].role, run->ranks[i].role);
    EXPECT_EQ(back->ranks[i].input, run->ranks[i].input);
    ASSERT_EQ(back->ranks[i].stages.size(), run->ranks[i].stages.size());
    for (std::size_t s = 0; s < run->ranks[i].stages.size(); ++s) {
      EXPECT_EQ(back->ranks[i].stages[s].name, run->ranks[i].stages[s].name);
      EXPECT_EQ(back->ranks[i].stages[s].kernel_time_ns, run->ranks[i].stages[s].kernel_time_ns);
      EXPECT_EQ(back->ranks[i].stages[s].wall_ns, run->ranks[i].stages[s].wall_ns);
    }
  }
  // A run of one rank has no rank rows.
  ASSERT_TRUE(store::ingest_run(*db, read_example("llama_prefill")).ok());
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM run_ranks"), 2);
}

// A database of schema 3 (before ranks) with a run in it: opening it for writing adds the
// rank tables and views; its run keeps its rows and has no ranks; a multi-rank run then fits.
TEST(Store, MigratesSchema3ToRanks) {
  test::TempDir dir;
  const std::string path = dir.file("v3.db");
  {
    auto raw = SqliteDb::open_writable(path, 1000);
    ASSERT_TRUE(raw.ok());
    for (const auto& m : store::migrations()) {
      if (m.version > 3) break;
      ASSERT_TRUE(raw->exec(std::string(m.sql)).ok()) << m.version;
      ASSERT_TRUE(raw->exec("INSERT INTO schema_migrations (version, description) VALUES (" +
                            std::to_string(m.version) + ", 'v')").ok());
    }
    ASSERT_TRUE(raw->exec("PRAGMA user_version = 3").ok());
    ASSERT_TRUE(raw->exec("INSERT INTO runs (run_key, launches, unique_kernels, kernel_time_ns) "
                          "VALUES ('old-run', 3, 1, 42.5)").ok());
  }
  ASSERT_EQ(store::schema_version(), 4);
  auto db = store::open_for_writing(path);
  ASSERT_TRUE(db.ok()) << db.error().to_string();
  EXPECT_EQ(count(*db, "PRAGMA user_version"), 4);
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM runs WHERE run_key = 'old-run'"), 1);
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM v_ranks"), 0);
  auto old = store::load_run(*db, "old-run");
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(old->ranks.empty());
  const std::string pair = test::fixture("multirank/tp_gloo_rank-0.json.gz") + "," +
                           test::fixture("multirank/tp_gloo_rank-1.json.gz");
  auto run = load::load_run_record(pair, {}, test::builtin_classifier());
  ASSERT_TRUE(run.ok()) << run.error().to_string();
  ASSERT_TRUE(store::ingest_run(*db, *run).ok());
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM v_ranks"), 2);
  EXPECT_EQ(count(*db, "SELECT COUNT(*) FROM v_ranks WHERE over_fastest_ns = 0"), 1);
}

}  // namespace
}  // namespace kernlens
