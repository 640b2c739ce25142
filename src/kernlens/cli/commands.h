// Subcommands: each registers its options on the CLI11 app and returns its runner.
// The runner returns the process exit code (0 ok, 1 gate failed, 2 bad input, 3 tool failed).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "kernlens/common/exit_codes.h"
#include "kernlens/load/load.h"
#include "kernlens/names/classify.h"

namespace kernlens::cli {

struct Command {
  CLI::App* app;             // the subcommand, to see whether it was given
  std::function<int()> run;  // runs it after parsing; returns the exit code
};

Command add_analyze_command(CLI::App& app);
Command add_names_command(CLI::App& app);
Command add_profile_command(CLI::App& app);
Command add_report_command(CLI::App& app);
Command add_demo_command(CLI::App& app);
Command add_export_command(CLI::App& app);

// Writes the report of `loaded` ("html" or "md") to `output` atomically; the exit code.
int write_report(const load::Loaded& loaded, const std::string& format, std::size_t top, const std::string& output);
Command add_db_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);

// `--rules FILE`, for the commands that classify kernels; may be given more than once.
void add_rules_option(CLI::App* cmd, std::vector<std::string>& rule_files);
// The classifier of the built-in rules after `rule_files`; prints the error when one does not
// load (its exit code is kExitBadInput).
std::optional<names::KernelClassifier> load_classifier(const std::vector<std::string>& rule_files);

// load::load(), printing the readers' warnings, or the error (then std::nullopt: exit code
// kExitBadInput). `classifier` must outlive the result.
std::optional<load::Loaded> load_inputs(const std::vector<std::string>& inputs,
                                        const names::KernelClassifier& classifier, const load::LoadOptions& options);

// Prints "kernlens: error: ..." / "kernlens: warning: ..." to stderr.
void print_error(const std::string& message);
void print_warning(const std::string& message);
// Prints the error; returns kExitBadInput, for a runner to return.
int bad_input(const Error& error);
// kExitOk, or prints that `output` names one of `inputs` (it would be overwritten) and returns
// kExitBadInput. Checked before any work.
int check_output_is_no_input(const std::string& output, const std::vector<std::string>& inputs);
// Writes a command's output atomically ("-": stdout); kExitOk, or kExitBadInput when it cannot.
int write_output(const std::string& path, std::string_view content);

}  // namespace kernlens::cli
