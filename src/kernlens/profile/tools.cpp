#include "kernlens/profile/tools.h"

#include <glob.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <optional>

#include "kernlens/profile/process.h"

namespace kernlens::profile {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim_whitespace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits text into lines (without '\n' or a trailing '\r').
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

bool is_rule_line(std::string_view line) {
  line = trim_whitespace(line);
  return !line.empty() && line.find_first_not_of("- ") == std::string_view::npos;
}

// Column spans [begin, end) from a rule line of dash runs: "---- -------- ---".
std::vector<std::pair<std::size_t, std::size_t>> column_spans(std::string_view rule) {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  std::size_t i = 0;
  while (i < rule.size()) {
    if (rule[i] != '-') {
      ++i;
      continue;
    }
    std::size_t begin = i;
    while (i < rule.size() && rule[i] == '-') ++i;
    spans.emplace_back(begin, i);
  }
  return spans;
}

// The text of a cell; the last column runs to the end of the line (ncu pads or overflows it).
std::string_view cell(std::string_view line,
                      const std::vector<std::pair<std::size_t, std::size_t>>& spans,
                      std::size_t column) {
  std::size_t begin = spans[column].first;
  if (begin >= line.size()) return {};
  std::size_t end = column + 1 < spans.size() ? spans[column + 1].first : line.size();
  return trim_whitespace(line.substr(begin, end - begin));
}

bool is_metric_name(std::string_view token) {
  if (token.find("__") == std::string_view::npos) return false;
  return std::all_of(token.begin(), token.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string_view first_token(std::string_view line) {
  line = trim_whitespace(line);
  return line.substr(0, line.find_first_of(" \t"));
}

void add_glob(const std::string& pattern, std::vector<std::string>& out) {
  glob_t matches{};
  if (::glob(pattern.c_str(), 0, nullptr, &matches) == 0) {
    std::vector<std::string> found(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
    // glob sorts by name; versioned install folders sort oldest first, and we want newest.
    std::reverse(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  ::globfree(&matches);
}

}  // namespace

const char* tool_name(ProfilerTool tool) {
  return tool == ProfilerTool::kNcu ? "ncu" : "nsys";
}

Result<ToolVersion> parse_tool_version(std::string_view version_output) {
  // The last "version" followed by a space and a digit.
  std::optional<std::size_t> number_at;
  for (std::size_t i = 0; i + 8 < version_output.size(); ++i) {
    if (iequals(version_output.substr(i, 7), "version") && version_output[i + 7] == ' ' &&
        std::isdigit(static_cast<unsigned char>(version_output[i + 8]))) {
      number_at = i + 8;
    }
  }
  if (!number_at) {
    return make_error("", 0,
                      "no version number in the profiler's --version output: '" +
                          std::string(trim_whitespace(version_output.substr(0, 200))) + "'");
  }
  std::string_view rest = version_output.substr(*number_at);
  std::size_t end = rest.find_first_not_of("0123456789.");
  std::string_view number = rest.substr(0, end);
  while (!number.empty() && number.back() == '.') number.remove_suffix(1);

  ToolVersion version;
  version.text = std::string(number);
  int* parts[] = {&version.year, &version.minor, &version.patch, &version.build};
  std::string_view remaining = number;
  for (int* part : parts) {
    if (remaining.empty()) break;
    auto [ptr, ec] = std::from_chars(remaining.data(), remaining.data() + remaining.size(), *part);
    if (ec != std::errc()) {
      return make_error("", 0, "bad version number '" + version.text + "'");
    }
    remaining.remove_prefix(static_cast<std::size_t>(ptr - remaining.data()));
    if (!remaining.empty()) remaining.remove_prefix(1);  // the '.'
  }
  return version;
}

Result<std::vector<NcuSection>> parse_ncu_sections(std::string_view list_sections_output) {
  std::vector<std::string_view> lines = split_lines(list_sections_output);
  std::size_t header = 0;
  while (header < lines.size() && first_token(lines[header]) != "Identifier") ++header;
  if (header == lines.size()) {
    return make_error("ncu --list-sections", 0, "no 'Identifier' header in the section table");
  }
  // The rule under the header gives the column layout; some versions draw it only above.
  std::size_t rule = header + 1 < lines.size() && is_rule_line(lines[header + 1]) ? header + 1
                     : header > 0 && is_rule_line(lines[header - 1])              ? header - 1
                                                                                  : lines.size();
  if (rule == lines.size()) {
    return make_error("ncu --list-sections", static_cast<std::int64_t>(header + 1),
                      "no dashed rule next to the section table's header");
  }
  auto spans = column_spans(lines[rule]);
  std::size_t enabled_col = spans.size(), display_col = spans.size(), file_col = spans.size();
  for (std::size_t c = 0; c < spans.size(); ++c) {
    std::string_view name = cell(lines[header], spans, c);
    if (name == "Enabled") enabled_col = c;
    if (name == "Display Name") display_col = c;
    if (name == "Filename" || name == "File Name") file_col = c;
  }

  std::vector<NcuSection> sections;
  for (std::size_t i = std::max(header, rule) + 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (trim_whitespace(line).empty() || is_rule_line(line)) continue;
    if (line.rfind("==", 0) == 0) continue;  // ==WARNING== and the like
    NcuSection section;
    section.identifier = std::string(first_token(line));
    if (display_col < spans.size())
      section.display_name = std::string(cell(line, spans, display_col));
    if (enabled_col < spans.size()) section.enabled = cell(line, spans, enabled_col) == "yes";
    if (file_col < spans.size()) section.filename = std::string(cell(line, spans, file_col));
    sections.push_back(std::move(section));
  }
  if (sections.empty()) {
    return make_error("ncu --list-sections", 0, "the section table has no rows");
  }
  return sections;
}

Result<std::vector<std::string>> parse_ncu_metric_names(std::string_view query_metrics_output) {
  std::vector<std::string_view> lines = split_lines(query_metrics_output);
  bool in_table = false;
  std::vector<std::string> names;
  for (std::string_view line : lines) {
    if (trim_whitespace(line).rfind("Metric Name", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    std::string_view token = first_token(line);
    if (is_metric_name(token)) names.emplace_back(token);
  }
  if (!in_table) {
    return make_error("ncu --query-metrics", 0, "no 'Metric Name' header in the metric table");
  }
  if (names.empty()) return make_error("ncu --query-metrics", 0, "the metric table has no rows");
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string_view metric_base_name(std::string_view metric) {
  return metric.substr(0, metric.find('.'));
}

std::vector<std::string> unknown_metrics(const std::vector<std::string>& requested,
                                         const std::vector<std::string>& known_metrics) {
  std::vector<std::string> unknown;
  for (const std::string& metric : requested) {
    std::string_view base = metric_base_name(metric);
    auto it = std::lower_bound(known_metrics.begin(), known_metrics.end(), base);
    if (it == known_metrics.end() || *it != base) unknown.push_back(metric);
  }
  return unknown;
}

std::vector<std::string> tool_candidates(ProfilerTool tool, const ToolSearchOptions& options) {
  if (!options.explicit_path.empty()) return {options.explicit_path};
  std::string name = tool_name(tool);
  std::vector<std::string> candidates;
  std::string_view path_env = options.path_env;
  const char* own_path = std::getenv("PATH");
  if (path_env.empty() && own_path) path_env = own_path;
  while (!path_env.empty()) {
    std::size_t colon = path_env.find(':');
    std::string_view dir = path_env.substr(0, colon);
    if (!dir.empty()) candidates.push_back(std::string(dir) + "/" + name);
    if (colon == std::string_view::npos) break;
    path_env.remove_prefix(colon + 1);
  }
  if (!options.search_system_dirs) return candidates;
  candidates.push_back("/usr/local/cuda/bin/" + name);
  if (tool == ProfilerTool::kNcu) {
    add_glob("/opt/nvidia/nsight-compute/*/ncu", candidates);
  } else {
    add_glob("/opt/nvidia/nsight-systems/*/bin/nsys", candidates);
    add_glob("/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys", candidates);
  }
  return candidates;
}

Result<std::string> locate_tool(ProfilerTool tool, const ToolSearchOptions& options) {
  std::vector<std::string> candidates = tool_candidates(tool, options);
  for (const std::string& candidate : candidates) {
    auto found = find_executable(candidate, "");
    if (found) return found;
  }
  if (!options.explicit_path.empty()) {
    return make_error("", 0,
                      std::string("cannot run ") + tool_name(tool) + " at '" +
                          options.explicit_path + "': no executable file there");
  }
  std::string dirs;
  for (const std::string& candidate : candidates) {
    dirs += (dirs.empty() ? "" : ", ") + candidate.substr(0, candidate.rfind('/'));
  }
  return make_error("", 0, std::string(tool_name(tool)) + " not found (looked in: " + dirs + ")");
}

namespace {

Result<ToolInfo> tool_info_from(const std::string& path, const Result<CapturedOutput>& run) {
  if (!run) return run.error();
  if (!run->result.succeeded()) {
    return make_error("", 0, "'" + path + " --version' failed: " + run->result.describe());
  }
  auto version = parse_tool_version(run->stdout_text + run->stderr_text);
  if (!version) return make_error(path, 0, version.error().message);
  ToolInfo info;
  info.path = path;
  info.version = std::move(*version);
  info.version_output = std::string(trim_whitespace(run->stdout_text));
  return info;
}

Result<std::vector<NcuSection>> ncu_sections_from(const std::string& ncu_path, const Result<CapturedOutput>& run) {
  if (!run) return run.error();
  if (!run->result.succeeded()) {
    return make_error("", 0, "'" + ncu_path + " --list-sections' failed: " + run->result.describe());
  }
  return parse_ncu_sections(run->stdout_text);
}

}  // namespace

Result<ToolInfo> probe_tool(const std::string& path, std::int64_t timeout_ns) {
  return tool_info_from(path, run_and_capture({path, "--version"}, timeout_ns));
}

NcuProbe start_ncu_probe(const std::string& ncu, std::int64_t timeout_ns) {
  return {ncu, PendingCapture::start({ncu, "--version"}, timeout_ns),
          PendingCapture::start({ncu, "--list-sections"}, timeout_ns)};
}

NcuFacts finish_ncu_probe(NcuProbe& probe) {
  return {tool_info_from(probe.ncu, finish_capture(probe.version)),
          ncu_sections_from(probe.ncu, finish_capture(probe.sections))};
}

Result<std::vector<std::string>> query_ncu_metrics(const std::string& ncu_path,
                                                   const std::string& chip,
                                                   std::int64_t timeout_ns) {
  std::vector<std::string> argv = {ncu_path, "--query-metrics"};
  if (!chip.empty()) argv.insert(argv.end(), {"--chip", chip});
  auto run = run_and_capture(argv, timeout_ns);
  if (!run) return run.error();
  if (!run->result.succeeded()) {
    return make_error("", 0,
                      "'" + ncu_path + " --query-metrics' failed: " + run->result.describe());
  }
  return parse_ncu_metric_names(run->stdout_text);
}

}  // namespace kernlens::profile
