// kernlens names FILE|- [--rules FILE]: classifies kernel names, one a line.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "kernlens/cli/commands.h"
#include "kernlens/common/file.h"
#include "kernlens/common/text.h"
#include "kernlens/names/classify.h"

namespace kernlens::cli {
namespace {

struct NamesOptions {
  std::string input;
  std::vector<std::string> rule_files;
};

// Standard input, read from the descriptor the program was given (not by reopening
// /dev/stdin, which starts a file over from its beginning).
Result<std::string> read_stdin() {
  std::string bytes;
  char chunk[1 << 16];
  while (std::size_t n = std::fread(chunk, 1, sizeof(chunk), stdin)) bytes.append(chunk, n);
  if (std::ferror(stdin)) return make_error("<stdin>", 0, "cannot read standard input");
  if (bytes.empty()) return make_error("<stdin>", 0, "empty input");
  return bytes;
}

// The names: FILE (gzip is inflated), or standard input for "-".
Result<std::string> read_names(const std::string& input) {
  if (input == "-") return read_stdin();
  auto buffer = InputBuffer::open(input);
  if (!buffer) return buffer.error();
  return std::string(buffer->bytes());
}

std::string classify_lines(std::string_view text, const names::KernelClassifier& classifier) {
  std::string out;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    names::Classification c = classifier.classify(line);
    // Tab-separated: a tab or control character inside a name is escaped (common/text.h).
    out += fmt::format("{}\t{}\t{}\t{}\t{}\n", escape_controls(line), escape_controls(c.base_name), to_string(c.library),
                       to_string(c.op_class), c.rule);
  }
  return out;
}

int run_names(const NamesOptions& opt) {
  std::optional<names::KernelClassifier> classifier = load_classifier(opt.rule_files);
  if (!classifier) return kExitBadInput;
  auto input = read_names(opt.input);
  if (!input) return bad_input(input.error());
  return write_output("-", classify_lines(*input, *classifier));
}

}  // namespace

Command add_names_command(CLI::App& app) {
  auto opt = std::make_shared<NamesOptions>();
  CLI::App* cmd = app.add_subcommand(
      "names", "Demangle, normalize and classify kernel names: one name a line in, one out.");
  cmd->footer(
      "Prints, for each non-empty line of FILE ('-': standard input), tab-separated:\n"
      "  name  base_name  library  op_class  rule\n"
      "base_name groups the instantiations of one kernel; library and op_class come from the\n"
      "first rule whose pattern matches the base name, rule is its id ('(none)': no rule).\n"
      "Examples:\n"
      "  kernlens names kernels.txt\n"
      "  kernlens names - --rules my_rules.txt < kernels.txt");
  cmd->add_option("FILE", opt->input, "Kernel names, one a line ('-': standard input)")
      ->required()
      ->type_name("FILE|-");
  add_rules_option(cmd, opt->rule_files);
  return {cmd, [opt] { return run_names(*opt); }};
}

}  // namespace kernlens::cli
