// kernlens db ingest RUN_OR_INPUT... [--db FILE] [--tag KEY=VALUE]...
// kernlens db query [--db FILE] (SQL | --view NAME) [--format text|csv|json|jsonl] [-o FILE]
// kernlens db export [--db FILE] --format csv|jsonl --out DIR
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernlens/cli/commands.h"
#include "kernlens/rundir/tags.h"
#include "kernlens/store/database.h"
#include "kernlens/store/query.h"
#include "kernlens/sweep/keyed_ingest.h"

namespace kernlens::cli {
namespace {

struct DbOptions {
  std::string db = "kernlens.db";
  // ingest
  std::vector<std::string> inputs, tags, rule_files;
  // query, export
  std::string sql, view, format = "text", output = "-", out_dir;
  double timeout_s = 10;
};

// db ingest of one run directory or export file, key first (sweep/keyed_ingest.h).
int ingest_one(const sweep::KeyedIngester& ingester, const std::string& path, const rundir::Tags& tags,
               const names::KernelClassifier& classifier) {
  auto done = ingester.ingest(path, [&]() -> Result<rundir::Tags> { return tags; }, classifier);
  if (!done) return bad_input(done.error());
  if (!done->read) {
    std::printf("already in the database %s: %s (not read again)\n", path.c_str(), done->run_key.c_str());
    return kExitOk;
  }
  const std::string ranks = done->ranks == 0 ? "" : fmt::format(", {} ranks", done->ranks);
  std::printf("%s %s: %s (%zu kernels, %zu stages%s)\n", done->added ? "added" : "already in the database", path.c_str(),
              done->run_key.c_str(), done->kernels, done->stages, ranks.c_str());
  return kExitOk;
}

int run_ingest(const DbOptions& opt) {
  auto tags = rundir::parse_tags(opt.tags);
  if (!tags) return bad_input(tags.error());
  std::optional<names::KernelClassifier> classifier = load_classifier(opt.rule_files);
  if (!classifier) return kExitBadInput;
  auto db = store::open_for_writing(opt.db);
  if (!db) return bad_input(db.error());
  auto ingester = sweep::KeyedIngester::open(*db, opt.db);
  if (!ingester) return bad_input(ingester.error());
  for (const auto& path : opt.inputs) {
    if (int rc = ingest_one(*ingester, path, *tags, *classifier); rc != kExitOk) return rc;
  }
  return kExitOk;
}

std::string view_help() {
  std::string s = "Built-in views (--view NAME, or SELECT ... FROM VIEW):\n";
  for (const auto& v : store::builtin_views()) s += fmt::format("  {:<15} {:<24} {}\n", v.name, v.view, v.what);
  return s;
}

int run_query(const DbOptions& opt) {
  if (opt.sql.empty() == opt.view.empty()) {
    return bad_input(make_error("", 0, "give an SQL statement or --view NAME (one of them)"));
  }
  std::string sql = opt.sql;
  if (!opt.view.empty()) {
    for (const auto& v : store::builtin_views()) {
      if (v.name == opt.view) sql = fmt::format("SELECT * FROM {}", v.view);
    }
    if (sql.empty()) return bad_input(make_error("", 0, "--view " + opt.view + ": no such view\n" + view_help()));
  }
  if (int rc = check_output_is_no_input(opt.output, {opt.db}); rc != kExitOk) return rc;
  auto db = store::open_for_reading(opt.db);
  if (!db) return bad_input(db.error());
  auto table = store::run_query(*db, sql, store::QueryOptions{opt.timeout_s});
  if (!table) return bad_input(make_error(opt.db, 0, table.error().message));
  return write_output(opt.output, store::format_table(*table, *store::parse_table_format(opt.format)));
}

int run_export(const DbOptions& opt) {
  auto db = store::open_for_reading(opt.db);
  if (!db) return bad_input(db.error());
  std::error_code ec;
  std::filesystem::create_directories(opt.out_dir, ec);
  if (ec) return bad_input(make_error(opt.out_dir, 0, "cannot create the directory: " + ec.message()));
  auto format = *store::parse_table_format(opt.format);
  for (auto table_name : store::export_tables()) {
    auto table = store::run_query(*db, fmt::format("SELECT * FROM {}", table_name));
    if (!table) return bad_input(make_error(opt.db, 0, table.error().message));
    std::string path = (std::filesystem::path(opt.out_dir) / fmt::format("{}.{}", table_name, opt.format)).string();
    if (int rc = write_output(path, store::format_table(*table, format)); rc != kExitOk) return rc;
    std::printf("%s: %zu rows\n", path.c_str(), table->rows.size());
  }
  return kExitOk;
}

void add_db_option(CLI::App* cmd, DbOptions& opt) {
  cmd->add_option("--db", opt.db, "The database file (SQLite)")->type_name("FILE")->capture_default_str();
}

CLI::App* add_ingest(CLI::App* db, DbOptions& opt) {
  CLI::App* cmd = db->add_subcommand("ingest", "Add runs to the database (again: no change).");
  cmd->footer(
      "RUN_OR_INPUT is a run directory of kernlens profile or one export file; each is one run.\n"
      "The inputs of every rank of one job joined by ',' (rank-0.json.gz,rank-1.json.gz) are one\n"
      "multi-rank run: its per-rank figures go to run_ranks (--view ranks).\n"
      "Model, dtype, batch and tokens come from the run's tags: those `kernlens profile --tag`\n"
      "kept in its manifest, then --tag here.\n"
      "Examples:\n"
      "  kernlens db ingest examples/data/runs/llama_prefill examples/data/runs/qwen_prefill\n"
      "  kernlens db ingest --db runs.db --tag model=qwen --tag batch=4 qwen_decode_raw.csv");
  cmd->add_option("RUN_OR_INPUT", opt.inputs, "Run directories or export files")->required();
  add_db_option(cmd, opt);
  cmd->add_option("--tag", opt.tags, "KEY=VALUE kept with the run; model, dtype, batch, tokens fill columns")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  add_rules_option(cmd, opt.rule_files);
  return cmd;
}

CLI::App* add_query(CLI::App* db, DbOptions& opt) {
  CLI::App* cmd = db->add_subcommand("query", "Run one read-only SQL statement on the database.");
  cmd->footer(view_help() +
              "Tables: runs, run_tags, devices, kernels, stages (docs/user-guide.md).\n"
              "Examples:\n"
              "  kernlens db query --view popularity\n"
              "  kernlens db query \"SELECT model, SUM(total_ns) FROM kernels JOIN runs USING (run_id)"
              " WHERE op_class = 'gemm' GROUP BY model\"");
  cmd->add_option("SQL", opt.sql, "One SQL statement (statements that write are refused)");
  cmd->add_option("--view", opt.view, "A built-in view instead of SQL")->type_name("NAME");
  add_db_option(cmd, opt);
  cmd->add_option("--format", opt.format, "Output format")
      ->check(CLI::IsMember({"text", "csv", "json", "jsonl"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", opt.output, "Write to FILE instead of stdout ('-')")->type_name("FILE");
  cmd->add_option("--timeout", opt.timeout_s, "Stop a query that runs longer than this (0: no limit)")
      ->type_name("SEC")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  return cmd;
}

CLI::App* add_export(CLI::App* db, DbOptions& opt) {
  CLI::App* cmd = db->add_subcommand("export", "Write every table to DIR, for DuckDB, pandas or Spark.");
  cmd->footer("Writes runs, run_tags, devices, kernels and stages as DIR/TABLE.csv or DIR/TABLE.jsonl.\n"
              "Example: kernlens db export --format csv --out exported/");
  add_db_option(cmd, opt);
  cmd->add_option("--format", opt.format, "csv or jsonl")->check(CLI::IsMember({"csv", "jsonl"}))->required();
  cmd->add_option("--out", opt.out_dir, "Directory to write into")->type_name("DIR")->required();
  return cmd;
}

}  // namespace

Command add_db_command(CLI::App& app) {
  auto opt = std::make_shared<DbOptions>();
  CLI::App* db = app.add_subcommand("db", "Many runs in one SQLite database: ingest, query, export.");
  db->require_subcommand(1);
  CLI::App* ingest = add_ingest(db, *opt);
  CLI::App* query = add_query(db, *opt);
  CLI::App* exporter = add_export(db, *opt);
  return {db, [=] {
            if (ingest->parsed()) return run_ingest(*opt);
            if (query->parsed()) return run_query(*opt);
            if (exporter->parsed()) return run_export(*opt);
            return kExitBadInput;
          }};
}

}  // namespace kernlens::cli
