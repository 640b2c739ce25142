// A sweep file (TOML): the command template, the parameter matrix, `kernlens profile`'s
// options, tags and environment per point, where the runs go and how Slurm runs them.
// docs/user-guide.md ("Sweeps") shows the format; in short:
//
//   name = "prefill"                       run_root = "runs/prefill"   (relative to the file)
//   command = ["python3", "llm_stages.py", "--model", "{model}", "--batch", "{batch}"]
//   profile = ["--discovery", "tracer", "--tier", "quick"]
//   [matrix]  model = ["llama", "qwen"]   batch = [1, 8]        (every combination)
//   [[zip]]   prompt = [128, 512]   steps = [30, 10]             (these move together)
//   [tags]    tokens = "{prompt}"          [env]  HF_HOME = "/scratch/hf"
//   [slurm]   partition = "gpu"  time = "00:30:00"  gpus = 1  max_parallel = 4
//
// "{name}" in any string is the point's value of parameter `name` ("{{" and "}}" are braces).
// Every error says FILE:LINE: unknown keys, wrong types, an empty matrix or list, a template
// naming no parameter, a parameter given twice, zips of unequal length.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernlens/common/error.h"

namespace kernlens::sweep {

// A string of the spec that may hold "{parameter}", and the line it is on.
struct Template {
  std::string text;
  std::int64_t line = 0;
};

struct Parameter {
  std::string name;
  std::vector<std::string> values;  // as text: strings as written, numbers in decimal
  std::int64_t line = 0;
};

// One axis of the product: a [matrix] parameter alone, or the parameters of one [[zip]],
// whose i-th values go together.
struct Axis {
  std::vector<Parameter> parameters;
  std::size_t size() const { return parameters.front().values.size(); }
};

struct SlurmOptions {
  std::string partition, time, mem, account;  // empty: the cluster's default
  std::optional<std::int64_t> gpus, cpus_per_task;
  std::optional<std::int64_t> max_parallel;  // array tasks running at once ("%N")
  std::vector<std::string> options;          // more sbatch options, one per line
  std::vector<std::string> setup;            // shell lines run before each point
};

struct SweepSpec {
  std::string path;      // the sweep file, as given
  std::string name;      // default: the file's name without .toml
  std::string run_root;  // absolute
  std::string workdir;   // absolute: where each point's command runs (default: the file's directory)
  std::string kernlens;  // the kernlens the points run; empty: this one
  std::vector<Template> command;
  std::vector<Template> profile_options;
  std::optional<Template> point_name;  // default: parameter names and values
  std::vector<std::pair<std::string, Template>> tags, env;
  std::vector<Axis> axes;  // [matrix] parameters in file order, then each [[zip]]
  SlurmOptions slurm;
};

// Reads and checks `path`.
Result<SweepSpec> load_spec(const std::string& path);
// The same for the text of a sweep file that `path` names (relative paths in it are relative
// to the directory of `path`).
Result<SweepSpec> parse_spec(std::string_view text, const std::string& path);

}  // namespace kernlens::sweep
