// Running the kernlens binary as a user does, for the tests of whole commands.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

extern char** environ;

namespace kernlens {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs kernlens with `args`; standard input is the file `stdin_path`, or an empty file (not
// /dev/null: some sandboxes make it a regular file that holds what was written to it).
// `cwd`, when given, is the directory it runs in.
inline CliResult run_cli(const std::vector<std::string>& args, std::string stdin_path = "",
                         const std::string& cwd = "") {
  test::TempDir dir;
  std::string out = dir.file("stdout"), err = dir.file("stderr");
  if (stdin_path.empty()) {
    stdin_path = dir.file("stdin");
    dir.write("stdin", "");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<std::string> argv_storage = {KERNLENS_BIN};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  CliResult r;
  if (posix_spawn(&pid, KERNLENS_BIN, &actions, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&actions);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace kernlens
