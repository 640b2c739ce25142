// The public API (kernlens.h) over load/, report/ and store/: each call is the CLI command's
// own path, with the result returned instead of printed.
#include "kernlens/api/kernlens.h"

#include <memory>
#include <utility>

#include "kernlens/analysis/compare.h"
#include "kernlens/load/load.h"
#include "kernlens/load/run_record.h"
#include "kernlens/report/compare_report.h"
#include "kernlens/report/headline.h"
#include "kernlens/report/html_report.h"
#include "kernlens/report/json_report.h"
#include "kernlens/store/database.h"
#include "kernlens/store/query.h"

namespace kernlens::api {
namespace {

[[noreturn]] void raise(const kernlens::Error& e) { throw Error(e.file, e.line, e.to_string()); }

template <class T>
T value_or_raise(Result<T> r) {
  if (!r) raise(r.error());
  return std::move(r).value();
}

// Kept alive as long as anything points into it (the analysis points into the classifier).
std::shared_ptr<const names::KernelClassifier> load_classifier(const LoadOptions& options) {
  return std::make_shared<const names::KernelClassifier>(value_or_raise(names::KernelClassifier::load(options.rule_files)));
}

Cell optional_cell(std::optional<std::int64_t> v) { return v ? Cell{*v} : Cell{}; }
Cell optional_cell(std::optional<double> v) { return v ? Cell{*v} : Cell{}; }
Cell known_cell(std::int64_t v) { return v == model::kUnknown ? Cell{} : Cell{v}; }

std::string_view launch_kind_name(model::LaunchKind kind) {
  switch (kind) {
    case model::LaunchKind::kKernel: return "kernel";
    case model::LaunchKind::kMemcpy: return "memcpy";
    case model::LaunchKind::kMemset: return "memset";
  }
  return "kernel";
}

Table to_table(store::Table t) {
  Table out{std::move(t.columns), {}};
  out.rows.reserve(t.rows.size());
  for (auto& row : t.rows) {
    std::vector<Cell> cells;
    cells.reserve(row.size());
    for (auto& c : row) {
      std::visit([&](auto&& v) { cells.emplace_back(std::move(v)); }, c);
    }
    out.rows.push_back(std::move(cells));
  }
  return out;
}

}  // namespace

struct Analysis::State {
  std::shared_ptr<const names::KernelClassifier> classifier;
  load::Loaded loaded;
};

Analysis Analysis::load(const std::vector<std::string>& inputs, const LoadOptions& options) {
  auto classifier = load_classifier(options);
  load::LoadOptions load_options;
  load_options.workload = {options.model_config, options.batch, options.prompt_tokens, options.decode_steps, options.runs};
  auto loaded = value_or_raise(load::load(inputs, *classifier, load_options));
  return Analysis(std::make_shared<const State>(State{std::move(classifier), std::move(loaded)}));
}

std::string Analysis::json(std::size_t top) const {
  return report::analysis_json(state_->loaded.profile, state_->loaded.analysis, {top});
}

std::string Analysis::html(std::size_t top) const {
  const report::ReportContext ctx{state_->loaded.command(), top};
  return report::analysis_html(state_->loaded.profile, state_->loaded.analysis, ctx);
}

std::string Analysis::summary() const {
  return report::headline_text(report::headline(state_->loaded.profile, state_->loaded.analysis));
}

Table Analysis::launches() const {
  const model::Profile& p = state_->loaded.profile;
  Table t{{"name", "kind", "stage", "device", "stream", "start_ns", "duration_ns", "count", "grid_x", "grid_y",
           "grid_z", "block_x", "block_y", "block_z", "registers_per_thread", "bytes", "input"},
          {}};
  t.rows.reserve(p.launches.size());
  for (const model::Launch& l : p.launches) {
    const model::LaunchConfig& c = p.config_of(l);
    t.rows.push_back({p.names[l.name], std::string(launch_kind_name(l.kind)), model::push_pop_path(p.stages[l.stage]),
                      l.device_ordinal < 0 ? Cell{} : Cell{std::int64_t{l.device_ordinal}}, known_cell(l.stream_id),
                      optional_cell(l.start_ns), optional_cell(l.duration_ns), static_cast<std::int64_t>(l.count),
                      std::int64_t{c.grid.x}, std::int64_t{c.grid.y}, std::int64_t{c.grid.z}, std::int64_t{c.block.x},
                      std::int64_t{c.block.y}, std::int64_t{c.block.z},
                      c.registers_per_thread < 0 ? Cell{} : Cell{std::int64_t{c.registers_per_thread}},
                      known_cell(l.bytes), p.inputs[l.input].path});
  }
  return t;
}

std::vector<std::string> Analysis::warnings() const {
  std::vector<std::string> out;
  for (const auto& w : state_->loaded.warnings) out.push_back(w.to_string());
  return out;
}

struct Database::State {
  std::string path;
  SqliteDb db;
};

Database Database::open(const std::string& path) {
  return Database(std::make_shared<const State>(State{path, value_or_raise(store::open_for_reading(path))}));
}

Table Database::query(const std::string& sql) const {
  auto table = store::run_query(state_->db, sql);
  if (!table) raise(make_error(state_->path, 0, table.error().message));
  return to_table(std::move(table).value());
}

Table Database::view(const std::string& name) const {
  for (const auto& v : store::builtin_views()) {
    if (v.name == name || v.view == name) return query("SELECT * FROM " + std::string(v.view));
  }
  std::string known;
  for (const auto& v : store::builtin_views()) known += (known.empty() ? "" : ", ") + std::string(v.name);
  raise(make_error(state_->path, 0, "no such view: " + name + " (the views: " + known + ")"));
}

std::vector<std::string> Database::views() {
  std::vector<std::string> out;
  for (const auto& v : store::builtin_views()) out.emplace_back(v.name);
  return out;
}

std::string compare_json(const std::string& base, const std::string& candidate, const LoadOptions& options) {
  auto classifier = load_classifier(options);
  model::RunRecord b = value_or_raise(load::load_run_record(base, {}, *classifier));
  model::RunRecord c = value_or_raise(load::load_run_record(candidate, {}, *classifier));
  return report::compare_json(analysis::compare_runs(b, c, {}));
}

std::string version() { return KERNLENS_VERSION; }

}  // namespace kernlens::api
