// Subcommands: each registers its options on the CLI11 app and returns its runner.
// The runner returns the process exit code (0 ok, 1 gate failed, 2 bad input, 3 tool failed).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace kernlens::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitGateFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitToolFailed = 3;

struct Command {
  CLI::App* app;             // the subcommand, to see whether it was given
  std::function<int()> run;  // runs it after parsing; returns the exit code
};

Command add_analyze_command(CLI::App& app);

// Prints "kernlens: error: ..." / "kernlens: warning: ..." to stderr.
void print_error(const std::string& message);
void print_warning(const std::string& message);

}  // namespace kernlens::cli
