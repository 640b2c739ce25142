// kernlens names FILE|- [--rules FILE]: classifies kernel names, one a line.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>


#include "kernlens/cli/commands.h"
#include "kernlens/common/chunk_reader.h"
#include "kernlens/common/file.h"
#include "kernlens/common/gzip.h"
#include "kernlens/common/parallel_chunks.h"
#include "kernlens/names/classify.h"
#include "kernlens/names/name_lines.h"

namespace kernlens::cli {
namespace {

struct NamesOptions {
  std::string input;
  std::vector<std::string> rule_files;
};

// Names of up to 1 MiB each, read 1 MiB at a time.
constexpr std::size_t kChunkBytes = 1 << 20;
constexpr std::size_t kLongestName = 1 << 20;

// The names: FILE (gzip is inflated), or standard input for "-", read from the descriptor the
// program was given (not by reopening /dev/stdin, which starts a file over from its beginning).
Result<std::unique_ptr<ChunkReader>> open_names(const std::string& input) {
  const bool ahead = ChunkReader::worth_reading_ahead();
  if (input == "-") return ChunkReader::over_descriptor(0, "<stdin>", kChunkBytes, kLongestName, ahead);
  std::error_code ec;
  if (std::filesystem::is_directory(input, ec)) return make_error(input, 0, "is a directory, expected a file of names");
  auto head = read_file_head(input, 2);
  if (!head) return head.error();
  if (is_gzip(*head)) return open_gzip_reader(input, kChunkBytes, kLongestName, ahead);
  return ChunkReader::open(input, kChunkBytes, kLongestName, ahead);
}

Status write_stdout(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size()) {
    return make_error("<stdout>", 0, "cannot write standard output");
  }
  return ok_status();
}

int run_names(const NamesOptions& opt) {
  std::optional<names::KernelClassifier> classifier = load_classifier(opt.rule_files);
  if (!classifier) return kExitBadInput;
  auto input = open_names(opt.input);
  if (!input) return bad_input(input.error());
  if (Status s = names::classify_name_lines(**input, *classifier, write_stdout, 1 << 20, default_threads()); !s) {
    return bad_input(s.error());
  }
  if ((*input)->offset() == 0) return bad_input(make_error(opt.input == "-" ? "<stdin>" : opt.input, 0, "empty input"));
  if (std::fflush(stdout) != 0) return bad_input(make_error("<stdout>", 0, "cannot write standard output"));
  return kExitOk;
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
      "The input is streamed (gzip inflated): memory stays the same whatever its size.\n"
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
