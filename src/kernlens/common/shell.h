// Command lines for people to read and paste: argv as POSIX shell words (--dry-run, the
// report's "Command" row, sweep scripts).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace kernlens {

// `arg` as a POSIX shell word: unchanged when it has only safe characters, else in single
// quotes (a quote inside written '\'').
std::string shell_quote(std::string_view arg);
// The argv as one line a shell would split back into the same argv.
std::string shell_join(std::span<const std::string> argv);

}  // namespace kernlens
