#include "kernlens/sweep/spec.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <span>
#include <string_view>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "kernlens/sweep/template.h"

namespace kernlens::sweep {
namespace fs = std::filesystem;
namespace {

using Known = std::span<const std::string_view>;

constexpr std::array<std::string_view, 12> kTopKeys = {"name", "run_root", "workdir", "kernlens", "command", "profile",
                                                       "point_name", "matrix", "zip", "tags", "env", "slurm"};
constexpr std::array<std::string_view, 9> kSlurmKeys = {"partition", "time", "mem", "account", "gpus",
                                                        "cpus_per_task", "max_parallel", "options", "setup"};
// `sweep` gives each point these; the spec may not.
constexpr std::array<std::string_view, 6> kProfileOwned = {"--out", "-o", "--output", "--run-id", "--", "--tag"};

// The spec being read: its path for errors, and the checks every part shares.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  Error at(const toml::node& n, const std::string& message) const { return make_error(file_, line(n), message); }
  Error at_key(const toml::key& k, const std::string& message) const {
    return make_error(file_, k.source().begin.line, message);
  }
  static std::int64_t line(const toml::node& n) { return n.source().begin.line; }
  const std::string& file() const { return file_; }

  Status only_known(const toml::table& t, Known known, std::string_view where) const {
    for (const auto& [key, value] : t) {
      if (std::find(known.begin(), known.end(), key.str()) == known.end()) {
        std::string list;
        for (auto k : known) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
        return at_key(key, fmt::format("unknown key '{}'{} (known: {})", key.str(), where, list));
      }
    }
    return ok_status();
  }

  Result<std::string> text(const toml::node& n, std::string_view key) const {
    if (!n.is_string()) return at(n, fmt::format("{}: expected a string", key));
    return std::string(n.as_string()->get());
  }

  // The string at `key` of `t` and its line, when `t` has it.
  Result<std::optional<Template>> optional_text(const toml::table& t, std::string_view key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::optional<Template>();
    auto s = text(*n, key);
    if (!s) return s.error();
    return std::optional<Template>(Template{std::move(s).value(), line(*n)});
  }

  Result<std::int64_t> positive(const toml::node& n, std::string_view key) const {
    if (!n.is_integer() || n.as_integer()->get() < 0) return at(n, fmt::format("{}: expected a whole number ≥ 0", key));
    return n.as_integer()->get();
  }

  Result<std::vector<std::string>> strings(const toml::node& n, std::string_view key) const {
    if (!n.is_array()) return at(n, fmt::format("{}: expected a list of strings", key));
    std::vector<std::string> out;
    for (const toml::node& e : *n.as_array()) {
      auto s = text(e, key);
      if (!s) return s.error();
      out.push_back(std::move(s).value());
    }
    return out;
  }

  Result<std::vector<Template>> templates(const toml::node& n, std::string_view key) const {
    if (!n.is_array()) return at(n, fmt::format("{}: expected a list of strings", key));
    std::vector<Template> out;
    for (const toml::node& e : *n.as_array()) {
      auto s = text(e, key);
      if (!s) return s.error();
      out.push_back({std::move(s).value(), line(e)});
    }
    return out;
  }

  // A parameter's values as text: strings as written, numbers and booleans as TOML writes them.
  Result<std::vector<std::string>> values(const toml::node& n, std::string_view where) const {
    if (!n.is_array()) return at(n, fmt::format("{}: expected a list of values", where));
    std::vector<std::string> out;
    for (const toml::node& e : *n.as_array()) {
      if (e.is_string()) {
        out.emplace_back(e.as_string()->get());
      } else if (e.is_integer()) {
        out.push_back(std::to_string(e.as_integer()->get()));
      } else if (e.is_floating_point()) {
        out.push_back(fmt::format("{}", e.as_floating_point()->get()));
      } else if (e.is_boolean()) {
        out.emplace_back(e.as_boolean()->get() ? "true" : "false");
      } else {
        return at(e, fmt::format("{}: a value must be a string, number or boolean", where));
      }
    }
    if (out.empty()) return at(n, fmt::format("{}: an empty list: give at least one value", where));
    return out;
  }

 private:
  std::string file_;
};

bool parameter_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool tag_key(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

bool env_name(std::string_view s) {
  return parameter_name(s) && !std::isdigit(static_cast<unsigned char>(s.front()));
}

Result<Parameter> read_parameter(const Reader& r, const toml::key& key, const toml::node& n, std::string_view where) {
  if (!parameter_name(key.str())) {
    return r.at_key(key, fmt::format("{} '{}': a parameter name is letters, digits and '_'", where, key.str()));
  }
  auto values = r.values(n, fmt::format("{} {}", where, key.str()));
  if (!values) return values.error();
  return Parameter{std::string(key.str()), std::move(values).value(), key.source().begin.line};
}

// A table's entries in the order the file gives them (toml++ keeps a table sorted by key).
std::vector<std::pair<const toml::key*, const toml::node*>> in_file_order(const toml::table& t) {
  std::vector<std::pair<const toml::key*, const toml::node*>> out;
  for (const auto& [key, value] : t) out.emplace_back(&key, &value);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    const auto& x = a.first->source().begin;
    const auto& y = b.first->source().begin;
    return x.line != y.line ? x.line < y.line : x.column < y.column;
  });
  return out;
}

Status read_matrix(const Reader& r, const toml::node& n, std::vector<Axis>& axes) {
  if (!n.is_table()) return r.at(n, "matrix: expected a table ([matrix])");
  for (const auto& [key, value] : in_file_order(*n.as_table())) {
    auto p = read_parameter(r, *key, *value, "[matrix]");
    if (!p) return p.error();
    axes.push_back(Axis{{std::move(p).value()}});
  }
  if (n.as_table()->empty()) return r.at(n, "[matrix] is empty: give each parameter a list of values");
  return ok_status();
}

Status read_zips(const Reader& r, const toml::node& n, std::vector<Axis>& axes) {
  if (!n.is_array_of_tables()) return r.at(n, "zip: expected tables ([[zip]])");
  for (const toml::node& z : *n.as_array()) {
    Axis axis;
    for (const auto& [key, value] : in_file_order(*z.as_table())) {
      auto p = read_parameter(r, *key, *value, "[[zip]]");
      if (!p) return p.error();
      if (!axis.parameters.empty() && p->values.size() != axis.size()) {
        return r.at_key(*key, fmt::format("[[zip]] {}: {} values, but {} has {}: the lists of a zip go together",
                                          key->str(), p->values.size(), axis.parameters.front().name, axis.size()));
      }
      axis.parameters.push_back(std::move(p).value());
    }
    if (axis.parameters.empty()) return r.at(z, "[[zip]] is empty: give its parameters lists of equal length");
    axes.push_back(std::move(axis));
  }
  return ok_status();
}

Result<std::vector<std::pair<std::string, Template>>> read_templated_table(const Reader& r, const toml::node& n,
                                                                           std::string_view table,
                                                                           bool (*valid_key)(std::string_view),
                                                                           std::string_view key_rule) {
  if (!n.is_table()) return r.at(n, fmt::format("{}: expected a table ([{}])", table, table));
  std::vector<std::pair<std::string, Template>> out;
  for (const auto& [key, value] : in_file_order(*n.as_table())) {
    if (!valid_key(key->str())) return r.at_key(*key, fmt::format("[{}] '{}': {}", table, key->str(), key_rule));
    auto s = r.text(*value, fmt::format("[{}] {}", table, key->str()));
    if (!s) return s.error();
    out.emplace_back(std::string(key->str()), Template{std::move(s).value(), Reader::line(*value)});
  }
  return out;
}

Status read_slurm(const Reader& r, const toml::node& n, SlurmOptions& slurm) {
  if (!n.is_table()) return r.at(n, "slurm: expected a table ([slurm])");
  const toml::table& t = *n.as_table();
  if (Status s = r.only_known(t, kSlurmKeys, " in [slurm]"); !s) return s;
  for (auto [key, field] : {std::pair{"partition", &slurm.partition}, std::pair{"time", &slurm.time},
                            std::pair{"mem", &slurm.mem}, std::pair{"account", &slurm.account}}) {
    auto s = r.optional_text(t, key);
    if (!s) return s.error();
    if (*s) *field = std::move((*s)->text);
  }
  for (auto [key, field] : {std::pair{"gpus", &slurm.gpus}, std::pair{"cpus_per_task", &slurm.cpus_per_task},
                            std::pair{"max_parallel", &slurm.max_parallel}}) {
    if (const toml::node* v = t.get(key)) {
      auto i = r.positive(*v, fmt::format("[slurm] {}", key));
      if (!i) return i.error();
      *field = *i;
    }
  }
  for (auto [key, field] : {std::pair{"options", &slurm.options}, std::pair{"setup", &slurm.setup}}) {
    if (const toml::node* v = t.get(key)) {
      auto list = r.strings(*v, fmt::format("[slurm] {}", key));
      if (!list) return list.error();
      *field = std::move(list).value();
    }
  }
  return ok_status();
}

// Relative paths in the spec are relative to the spec's own directory.
std::string beside(const std::string& spec_path, const std::string& p) {
  fs::path path(p);
  if (path.is_relative()) path = fs::absolute(fs::path(spec_path)).parent_path() / path;
  std::string out = path.lexically_normal().string();
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

Status read_paths(const Reader& r, const toml::table& t, SweepSpec& spec) {
  const toml::node* root = t.get("run_root");
  if (!root) return make_error(r.file(), 0, "no run_root: say where the run directories go (run_root = \"DIR\")");
  auto run_root = r.text(*root, "run_root");
  if (!run_root) return run_root.error();
  if (run_root->empty()) return r.at(*root, "run_root: an empty path");
  spec.run_root = beside(spec.path, *run_root);
  auto workdir = r.optional_text(t, "workdir");
  if (!workdir) return workdir.error();
  spec.workdir = beside(spec.path, *workdir ? (*workdir)->text : ".");
  auto kernlens = r.optional_text(t, "kernlens");
  if (!kernlens) return kernlens.error();
  if (*kernlens) {
    const std::string& k = (*kernlens)->text;
    spec.kernlens = k.find('/') == std::string::npos ? k : beside(spec.path, k);  // a name: found on PATH
  }
  return ok_status();
}

Status read_commands(const Reader& r, const toml::table& t, SweepSpec& spec) {
  const toml::node* command = t.get("command");
  if (!command) return make_error(r.file(), 0, "no command: give the program to profile (command = [\"python3\", ...])");
  auto argv = r.templates(*command, "command");
  if (!argv) return argv.error();
  if (argv->empty()) return r.at(*command, "command: an empty list: give the program and its arguments");
  spec.command = std::move(argv).value();
  if (const toml::node* p = t.get("profile")) {
    auto options = r.templates(*p, "profile");
    if (!options) return options.error();
    for (const auto& o : *options) {
      std::string_view flag = std::string_view(o.text).substr(0, o.text.find('='));
      if (std::find(kProfileOwned.begin(), kProfileOwned.end(), flag) != kProfileOwned.end()) {
        return make_error(r.file(), o.line,
                          fmt::format("profile: '{}' is set by kernlens sweep for each point (run_root, [tags])", o.text));
      }
    }
    spec.profile_options = std::move(options).value();
  }
  auto point_name = r.optional_text(t, "point_name");
  if (!point_name) return point_name.error();
  spec.point_name = std::move(point_name).value();
  return ok_status();
}

Status read_axes(const Reader& r, const toml::table& t, SweepSpec& spec) {
  if (const toml::node* m = t.get("matrix")) {
    if (Status s = read_matrix(r, *m, spec.axes); !s) return s;
  }
  if (const toml::node* z = t.get("zip")) {
    if (Status s = read_zips(r, *z, spec.axes); !s) return s;
  }
  if (spec.axes.empty()) {
    return make_error(r.file(), 0, "the matrix is empty: give parameters in [matrix] (every combination) or [[zip]]");
  }
  std::set<std::string> seen;
  for (const auto& axis : spec.axes) {
    for (const auto& p : axis.parameters) {
      if (!seen.insert(p.name).second) {
        return make_error(r.file(), p.line, fmt::format("parameter '{}' is given twice", p.name));
      }
    }
  }
  return ok_status();
}

// Every template expands with the parameters there are.
Status check_templates(const SweepSpec& spec) {
  Values names;
  for (const auto& axis : spec.axes) {
    for (const auto& p : axis.parameters) names[p.name] = "";
  }
  std::vector<const Template*> all;
  for (const auto& t : spec.command) all.push_back(&t);
  for (const auto& t : spec.profile_options) all.push_back(&t);
  if (spec.point_name) all.push_back(&*spec.point_name);
  for (const auto* table : {&spec.tags, &spec.env}) {
    for (const auto& [key, t] : *table) all.push_back(&t);
  }
  for (const Template* t : all) {
    if (auto e = expand(spec.path, *t, names); !e) return e.error();
  }
  return ok_status();
}

Status read_spec(const Reader& r, const toml::table& t, SweepSpec& spec) {
  if (Status s = r.only_known(t, kTopKeys, ""); !s) return s;
  auto name = r.optional_text(t, "name");
  if (!name) return name.error();
  spec.name = *name ? (*name)->text : fs::path(spec.path).stem().string();
  for (auto* step : {read_paths, read_commands, read_axes}) {
    if (Status s = step(r, t, spec); !s) return s;
  }
  if (const toml::node* n = t.get("tags")) {
    auto tags = read_templated_table(r, *n, "tags", tag_key, "a tag key is letters, digits, '_', '-', '.'");
    if (!tags) return tags.error();
    spec.tags = std::move(tags).value();
  }
  if (const toml::node* n = t.get("env")) {
    auto env = read_templated_table(r, *n, "env", env_name, "a variable name is letters, digits and '_'");
    if (!env) return env.error();
    spec.env = std::move(env).value();
  }
  if (const toml::node* n = t.get("slurm")) {
    if (Status s = read_slurm(r, *n, spec.slurm); !s) return s;
  }
  return check_templates(spec);
}

}  // namespace

Result<SweepSpec> load_spec(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path, 0, "cannot read the sweep file");
  return parse_spec(std::string(std::istreambuf_iterator<char>(in), {}), path);
}

Result<SweepSpec> parse_spec(std::string_view text, const std::string& path) {
  SweepSpec spec;
  spec.path = path;
  toml::table table;
  // toml++ as Debian builds it reports a syntax error by throwing; it stops here.
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return make_error(path, e.source().begin.line, fmt::format("not a TOML file: {}", e.description()));
  }
  if (Status s = read_spec(Reader(path), table, spec); !s) return s.error();
  return spec;
}

}  // namespace kernlens::sweep
