// kernlens's public C++ API (installed as <kernlens/kernlens.h>; `find_package(kernlens)` or
// `pkg-config kernlens`): load profiles and get the analysis, query a run database, compare two
// runs: what `kernlens analyze`, `db query` and `compare` do, as values. It sits on the one
// loading path (load/load.h) and hides every internal type, so this header is all a program
// needs. The Python module (python/) is built on it.
//
//   namespace kl = kernlens::api;
//   kl::Analysis a = kl::Analysis::load({"runs/llama"});
//   std::string doc = a.json();                       // analyze --format json
//   kl::Table top = kl::Database::open("runs.db").view("popularity");
//
// (kernlens::api: the library's own kernlens:: names stay out of a program's way.)
// Errors throw kernlens::api::Error (file and line where the input was bad): this is a boundary of
// the library, like the CLI, where a Result<T> would make every caller unpack internals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace kernlens::api {

class Error : public std::runtime_error {
 public:
  Error(std::string file, std::int64_t line, const std::string& what)
      : std::runtime_error(what), file_(std::move(file)), line_(line) {}
  const std::string& file() const { return file_; }  // empty when not about a file
  std::int64_t line() const { return line_; }        // 1-based; 0: the whole file

 private:
  std::string file_;
  std::int64_t line_;
};

using Cell = std::variant<std::monostate, std::int64_t, double, std::string>;  // monostate: no value

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
};

struct LoadOptions {
  std::vector<std::string> rule_files;  // --rules: kernel rules read before the built-in ones
  // The analytic work (analyze --model-config, --batch, --prompt-tokens, --decode-steps,
  // --runs): a Hugging Face config.json and the sizes the program ran; a run directory's tags
  // fill what is not given.
  std::string model_config;
  std::optional<std::int64_t> batch, prompt_tokens, decode_steps, runs;
};

// One loaded and analyzed set of inputs: a run directory of `kernlens profile`, or export files
// (ncu CSV, nsys SQLite, PyTorch trace, .kltrace), reconciled as `kernlens analyze` does.
class Analysis {
 public:
  static Analysis load(const std::vector<std::string>& inputs, const LoadOptions& options = {});

  std::string json(std::size_t top = 0) const;   // `analyze --format json` (schema kernlens.analysis/1)
  std::string html(std::size_t top = 25) const;  // `report`: one self-contained page
  std::string summary() const;                   // the demo's headline: time, worst stage, top kernel, MFU
  Table launches() const;                        // one row per launch record as read
  std::vector<std::string> warnings() const;     // "FILE:LINE: what", problems that did not stop the read

 private:
  struct State;
  explicit Analysis(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;
};

// A run database (`kernlens db ingest`, `sweep ingest`), read-only.
class Database {
 public:
  static Database open(const std::string& path);
  Table query(const std::string& sql) const;    // one read-only statement
  Table view(const std::string& name) const;    // a built-in view: "popularity" or "v_kernel_popularity"
  static std::vector<std::string> views();      // the built-in views' short names

 private:
  struct State;
  explicit Database(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;
};

// `kernlens compare BASE CANDIDATE --format json` (schema kernlens.compare/1): each a run
// directory, an export file, or a multi-rank run's inputs joined by ',' (then "ranks" compares
// them rank by rank).
std::string compare_json(const std::string& base, const std::string& candidate, const LoadOptions& options = {});

std::string version();

}  // namespace kernlens::api
