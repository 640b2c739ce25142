// SQLite inputs as users' systems hold them: exports in WAL mode, with or without a log that
// holds changes, on read-only storage. They are read where they lie and never written.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <numeric>
#include <set>

#include "kernlens/ingest/nsys/sqlite.h"
#include "kernlens/common/sqlite_db.h"
#include "kernlens/store/database.h"
#include "kernlens/store/query.h"
#include "kernlens/load/run_record.h"
#include "test_util.h"

namespace kernlens {
namespace {

namespace fs = std::filesystem;

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
}

// A copy of the nsys fixture at `path`, switched to WAL mode (the log checkpointed away).
void wal_copy(const std::string& path) {
  fs::copy_file(test::fixture("nsys/llama_stages.sqlite"), path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, "PRAGMA journal_mode = WAL");
  sqlite3_close(db);
  ASSERT_FALSE(fs::exists(path + "-wal"));
  ASSERT_EQ(test::file_text(path)[18], 2) << "not in WAL mode";
}

struct Totals {
  std::size_t launches = 0;
  double duration_ns = 0;
};

test::ReadResult read_export(const std::string& path) {
  test::ReadResult r;
  r.status = ingest::read_input(path, r.profile);
  return r;
}

Totals totals(const model::Profile& p) {
  Totals t{p.launches.size(), 0};
  for (const auto& l : p.launches) t.duration_ns += l.total_duration_ns().value_or(0);
  return t;
}

TEST(SqliteInputs, AWalModeExportReadsWholeAndIsNotWritten) {
  test::TempDir dir;
  const std::string path = dir.file("export.sqlite");
  wal_copy(path);
  const std::string before = test::file_text(path);
  const auto files_before = listing(dir.path());
  auto original = test::read_fixture("nsys/llama_stages.sqlite");
  ASSERT_TRUE(original.status.ok());
  // In memory (a small file), and from the file (as a large one is read).
  auto in_memory = read_export(path);
  model::Profile from_file;
  from_file.inputs.push_back({path, model::InputFormat::kNsysSqlite, "", {}, {}});
  ingest::ReadContext ctx{path, from_file, 0, {}, nullptr};
  Status file_status = ingest::read_nsys_sqlite_file(path, before.size(), ctx);
  for (const auto* status : {&in_memory.status, &file_status}) {
    ASSERT_TRUE(status->ok()) << status->error().to_string();
  }
  for (const auto* p : {&in_memory.profile, &from_file}) {
    EXPECT_EQ(totals(*p).launches, totals(original.profile).launches);
    EXPECT_DOUBLE_EQ(totals(*p).duration_ns, totals(original.profile).duration_ns);
  }
  EXPECT_EQ(test::file_text(path), before) << "the input was written";
  EXPECT_EQ(listing(dir.path()), files_before) << "a file was left beside the input";
}

// The export while a writer holds it open: the last launch is only in the log.
void wal_with_pending_changes(const std::string& path, const std::string& copy_dir) {
  wal_copy(path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, "PRAGMA wal_autocheckpoint = 0");
  exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid DESC LIMIT 1");
  fs::create_directories(copy_dir);
  fs::copy_file(path, copy_dir + "/export.sqlite");
  fs::copy_file(path + "-wal", copy_dir + "/export.sqlite-wal");
  sqlite3_close(db);
}

TEST(SqliteInputs, ChangesOnlyInTheWriteAheadLogAreRead) {
  test::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(wal_with_pending_changes(dir.file("live.sqlite"), dir.file("copy")));
  const std::string path = dir.file("copy/export.sqlite");
  const std::string db_before = test::file_text(path), wal_before = test::file_text(path + "-wal");
  auto original = test::read_fixture("nsys/llama_stages.sqlite");
  auto r = read_export(path);
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  EXPECT_EQ(r.profile.launches.size(), original.profile.launches.size() + 1);
  EXPECT_EQ(test::file_text(path), db_before);
  EXPECT_EQ(test::file_text(path + "-wal"), wal_before);
}

// What `work` returns when run by a user who cannot write `dir` (read-only storage): as root,
// in a child process that drops to nobody. The error text, empty when it succeeded.
struct Unprivileged {
  bool ran = false;
  std::string error;
};

Unprivileged on_read_only_storage(const fs::path& dir, const std::function<Status()>& work) {
  EXPECT_EQ(chmod(dir.parent_path().c_str(), 0755), 0);  // mkdtemp's 0700 would stop nobody
  EXPECT_EQ(chmod(dir.c_str(), 0555), 0);
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(pipe_fds[0]);
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    Status s = work();
    std::string message = s.ok() ? "" : s.error().to_string();
    if (write(pipe_fds[1], message.data(), message.size()) < 0) _exit(4);
    _exit(0);
  }
  close(pipe_fds[1]);
  Unprivileged out;
  char buf[512];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;) out.error.append(buf, static_cast<std::size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  out.ran = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  chmod(dir.c_str(), 0755);
  return out;
}

// The log's changes cannot be read without PATH-shm, which read-only storage cannot hold: a
// clear error, not "damaged".
TEST(SqliteInputs, ALogOnReadOnlyStorageGivesAClearError) {
  test::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(wal_with_pending_changes(dir.file("live.sqlite"), dir.file("ro")));
  const std::string path = dir.file("ro/export.sqlite");
  auto r = on_read_only_storage(dir.file("ro"), [&] {
    model::Profile profile;
    return ingest::read_input(path, profile);
  });
  ASSERT_TRUE(r.ran) << "cannot drop to an unprivileged user here";
  EXPECT_NE(r.error.find(path + ": "), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("WAL mode"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("-shm"), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find("damaged"), std::string::npos) << r.error;
  EXPECT_FALSE(fs::exists(path + "-shm"));
}

// A kernlens database (always in WAL mode) on a shared, read-only results directory: db query
// reads it (SQLite's normal read-only open would need to create runs.db-shm there).
TEST(SqliteInputs, TheRunDatabaseIsQueriedOnReadOnlyStorage) {
  test::TempDir dir;
  fs::create_directory(dir.file("shared"));
  const std::string path = dir.file("shared/runs.db");
  {
    auto db = store::open_for_writing(path);
    ASSERT_TRUE(db.ok());
    auto run = load::load_run_record(test::fixture("nsys/saxpy_stats_cuda_gpu_kern_sum.csv"), {}, test::builtin_classifier());
    ASSERT_TRUE(run.ok());
    ASSERT_TRUE(store::ingest_run(*db, *run).ok());
  }
  ASSERT_FALSE(fs::exists(path + "-wal"));
  const std::string before = test::file_text(path);
  auto r = on_read_only_storage(dir.file("shared"), [&]() -> Status {
    auto db = store::open_for_reading(path);
    if (!db) return db.error();
    auto t = store::run_query(*db, "SELECT COUNT(*) FROM kernels");
    if (!t) return t.error();
    if (t->rows.size() != 1 || std::get<std::int64_t>(t->rows[0][0]) != 1) return make_error(path, 0, "wrong count");
    return ok_status();
  });
  ASSERT_TRUE(r.ran) << "cannot drop to an unprivileged user here";
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(test::file_text(path), before);
}

// SQLite reads the text 'abc' in an INTEGER column as 0: a start time so read made kernel time
// up (+25% on the probe's file). Only integers are times.
TEST(SqliteInputs, ATextTimeIsAnErrorNotZero) {
  test::TempDir dir;
  const std::string path = dir.file("text_start.sqlite");
  fs::copy_file(test::fixture("nsys/llama_stages.sqlite"), path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'abc' WHERE rowid = (SELECT MIN(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)");
  sqlite3_close(db);
  auto r = read_export(path);
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.error().file, path);
  EXPECT_NE(r.status.error().message.find("start is 'abc', not an integer time"), std::string::npos)
      << r.status.error().to_string();
}

}  // namespace
}  // namespace kernlens
