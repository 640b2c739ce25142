#include "kernlens/sweep/plan.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "kernlens/load/run_record.h"
#include "kernlens/profile/process.h"
#include "kernlens/sweep/template.h"

namespace kernlens::sweep {
namespace fs = std::filesystem;
namespace {

constexpr std::int64_t kProbeTimeoutNs = 10'000'000'000;
// More points than any cluster queue takes in one sweep: a matrix this large is a mistake.
constexpr std::size_t kMaxPoints = 100'000;

bool directory_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

// "model-llama_batch-8": each parameter's name and value, characters other than letters,
// digits, '-', '_' and '.' made '_'.
std::string default_id(const Pairs& parameters) {
  std::string id;
  for (const auto& [name, value] : parameters) {
    id += fmt::format("{}{}-{}", id.empty() ? "" : "_", name, value);
  }
  std::replace_if(id.begin(), id.end(), [](char c) { return !directory_char(c); }, '_');
  return id;
}

// Errors where a value cannot name a directory of its own under the run root.
Status check_id(const SweepSpec& spec, const std::string& id) {
  std::int64_t line = spec.point_name ? spec.point_name->line : 0;
  if (id.empty() || id == "." || id == ".." || !std::all_of(id.begin(), id.end(), directory_char)) {
    return make_error(spec.path, line,
                      fmt::format("point name \"{}\": use letters, digits, '-', '_' and '.' only", id));
  }
  if (id.front() == '_') {
    return make_error(spec.path, line, fmt::format("point name \"{}\": names starting with '_' are kernlens's", id));
  }
  return ok_status();
}

void set(Pairs& pairs, const std::string& key, const std::string& value) {
  for (auto& [k, v] : pairs) {
    if (k == key) {
      v = value;
      return;
    }
  }
  pairs.emplace_back(key, value);
}

Result<Pairs> expand_table(const SweepSpec& spec, const std::vector<std::pair<std::string, Template>>& table,
                           const Values& values) {
  Pairs out;
  for (const auto& [key, t] : table) {
    auto v = expand(spec.path, t, values);
    if (!v) return v.error();
    out.emplace_back(key, std::move(v).value());
  }
  return out;
}

Result<std::vector<std::string>> expand_list(const SweepSpec& spec, const std::vector<Template>& list,
                                             const Values& values) {
  std::vector<std::string> out;
  for (const auto& t : list) {
    auto v = expand(spec.path, t, values);
    if (!v) return v.error();
    out.push_back(std::move(v).value());
  }
  return out;
}

// The line that gave tag `key` its value: the [tags] entry, else the parameter.
std::int64_t tag_line(const SweepSpec& spec, const std::string& key) {
  for (const auto& [k, t] : spec.tags) {
    if (k == key) return t.line;
  }
  for (const auto& axis : spec.axes) {
    for (const auto& p : axis.parameters) {
      if (p.name == key) return p.line;
    }
  }
  return 0;
}

Status fill_tags(const SweepSpec& spec, const Values& values, Point& p) {
  p.tags = p.parameters;
  auto extra = expand_table(spec, spec.tags, values);
  if (!extra) return extra.error();
  for (const auto& [key, value] : *extra) set(p.tags, key, value);
  set(p.tags, "sweep", spec.name);
  set(p.tags, "sweep_point", p.id);
  for (const auto& [key, value] : p.tags) {
    // Checked here, so that a sweep learns of a bad value before its runs, not at ingest.
    if (!load::tag_fits_column(key, value)) {
      return make_error(spec.path, tag_line(spec, key),
                        fmt::format("point {}: tag {}=\"{}\" must be a whole number (it fills the database's {} column)",
                                    p.id, key, value, key));
    }
  }
  return ok_status();
}

Result<Point> make_point(const SweepSpec& spec, std::size_t index, const std::vector<std::size_t>& at) {
  Point p;
  p.index = index;
  Values values;
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    for (const auto& param : spec.axes[a].parameters) {
      p.parameters.emplace_back(param.name, param.values[at[a]]);
      values[param.name] = param.values[at[a]];
    }
  }
  if (spec.point_name) {
    auto id = expand(spec.path, *spec.point_name, values);
    if (!id) return id.error();
    p.id = std::move(id).value();
  } else {
    p.id = default_id(p.parameters);
  }
  if (Status s = check_id(spec, p.id); !s) return s.error();
  p.dir = (fs::path(spec.run_root) / p.id).string();
  auto command = expand_list(spec, spec.command, values);
  auto options = expand_list(spec, spec.profile_options, values);
  auto env = expand_table(spec, spec.env, values);
  for (const Error* e : {command ? nullptr : &command.error(), options ? nullptr : &options.error(),
                         env ? nullptr : &env.error()}) {
    if (e) return *e;
  }
  p.command = std::move(command).value();
  p.profile_options = std::move(options).value();
  p.env = std::move(env).value();
  if (Status s = fill_tags(spec, values, p); !s) return s.error();
  return p;
}

// Advances the odometer `at` over the axes' sizes, the last axis fastest; false past the end.
bool next(std::vector<std::size_t>& at, const std::vector<Axis>& axes) {
  for (std::size_t a = axes.size(); a-- > 0;) {
    if (++at[a] < axes[a].size()) return true;
    at[a] = 0;
  }
  return false;
}

}  // namespace

std::string Point::run_dir() const {
  return (fs::path(dir) / "run").string();
}

std::string Point::point_file() const {
  return (fs::path(dir) / "point.json").string();
}

std::string Plan::sweep_dir() const {
  return (fs::path(spec.run_root) / "_sweep").string();
}

Result<Plan> make_plan(SweepSpec spec, const std::string& default_kernlens) {
  std::size_t product = 1;
  for (const auto& axis : spec.axes) {
    if (product > kMaxPoints / axis.size()) {
      return make_error(spec.path, axis.parameters.front().line,
                        fmt::format("the matrix makes more than {} points: split the sweep", kMaxPoints));
    }
    product *= axis.size();
  }
  Plan plan;
  plan.kernlens = spec.kernlens.empty() ? default_kernlens : spec.kernlens;
  std::vector<std::size_t> at(spec.axes.size(), 0);
  std::map<std::string, std::size_t> seen;
  do {
    auto p = make_point(spec, plan.points.size(), at);
    if (!p) return p.error();
    if (auto [it, added] = seen.emplace(p->id, p->index); !added) {
      return make_error(spec.path, spec.point_name ? spec.point_name->line : 0,
                        fmt::format("points {} and {} are both named \"{}\": give point_name every parameter that varies",
                                    it->second + 1, p->index + 1, p->id));
    }
    plan.points.push_back(std::move(p).value());
  } while (next(at, spec.axes));
  plan.spec = std::move(spec);
  return plan;
}

std::vector<std::string> profile_argv(const Plan& plan, const Point& p, bool with_tags) {
  std::vector<std::string> argv = {plan.kernlens, "profile"};
  argv.insert(argv.end(), p.profile_options.begin(), p.profile_options.end());
  argv.insert(argv.end(), {"--out", p.dir, "--run-id", "run"});
  if (with_tags) {
    for (const auto& [key, value] : p.tags) argv.insert(argv.end(), {"--tag", key + "=" + value});
  }
  argv.push_back("--");
  argv.insert(argv.end(), p.command.begin(), p.command.end());
  return argv;
}

std::vector<std::string> with_env(const Point& p, const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  if (!p.env.empty()) words.push_back("env");
  for (const auto& [name, value] : p.env) words.push_back(name + "=" + value);
  words.insert(words.end(), argv.begin(), argv.end());
  return words;
}

bool profile_takes_tags(const std::string& kernlens) {
  auto help = profile::run_and_capture({kernlens, "profile", "--help"}, kProbeTimeoutNs);
  return help && help->result.exit_code == 0 && help->stdout_text.find("--tag") != std::string::npos;
}

nlohmann::ordered_json point_json(const Plan& plan, const Point& p, const std::vector<std::string>& argv) {
  auto pairs = [](const Pairs& list) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& [k, v] : list) j[k] = v;
    return j;
  };
  nlohmann::ordered_json j;
  j["schema"] = "kernlens.sweep-point/1";
  j["sweep"] = plan.spec.name;
  j["spec"] = fs::absolute(plan.spec.path).lexically_normal().string();
  j["index"] = p.index;
  j["id"] = p.id;
  j["parameters"] = pairs(p.parameters);
  j["tags"] = pairs(p.tags);
  j["env"] = pairs(p.env);
  j["workdir"] = plan.spec.workdir;
  j["command"] = p.command;
  j["argv"] = argv;
  return j;
}

Result<Pairs> read_point_tags(const Point& p) {
  const std::string path = p.point_file();
  std::ifstream in(path);
  if (!in) return make_error(path, 0, "cannot read the point's file (was the point submitted?)");
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("tags") || !j["tags"].is_object()) {
    return make_error(path, 0, "not a kernlens sweep point file (an object with \"tags\" expected)");
  }
  Pairs tags;
  for (const auto& [key, value] : j["tags"].items()) {
    if (!value.is_string()) return make_error(path, 0, fmt::format("tag '{}' is not a string", key));
    tags.emplace_back(key, value.get<std::string>());
  }
  return tags;
}

}  // namespace kernlens::sweep
