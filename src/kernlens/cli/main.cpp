// kernlens: where does my model spend its GPU time, and why. See DESIGN.md §3.
#include <cstdio>
#include <exception>
#include <vector>

#include <CLI/CLI.hpp>

#include "kernlens/cli/commands.h"
#include "kernlens/common/file.h"
#include "kernlens/common/memory.h"
#include "kernlens/common/parallel_chunks.h"
#include "kernlens/common/text.h"

namespace kernlens::cli {

// Messages quote input (names, cells): its control characters are escaped (common/text.h).
void print_error(const std::string& message) {
  std::fprintf(stderr, "kernlens: error: %s\n", escape_controls_but_newlines(message).c_str());
}

void print_warning(const std::string& message) {
  std::fprintf(stderr, "kernlens: warning: %s\n", escape_controls_but_newlines(message).c_str());
}

int bad_input(const Error& error) {
  print_error(error.to_string());
  return kExitBadInput;
}

int check_output_is_no_input(const std::string& output, const std::vector<std::string>& inputs) {
  if (output == "-") return kExitOk;
  for (const auto& input : inputs) {
    if (same_file(output, input)) {
      return bad_input(make_error(output, 0, "is also an input (" + input + "): refusing to overwrite it"));
    }
  }
  return kExitOk;
}

int write_output(const std::string& path, std::string_view content) {
  if (Status s = write_file_atomically(path, content); !s) return bad_input(s.error());
  return kExitOk;
}

void add_rules_option(CLI::App* cmd, std::vector<std::string>& rule_files) {
  cmd->add_option("--rules", rule_files,
                  "Kernel rules to try before the built-in ones (see the user guide); may be "
                  "given more than once")
      ->type_name("FILE")
      ->allow_extra_args(false)  // one file per --rules, so that INPUT may follow it
      ->take_all();
}

std::optional<names::KernelClassifier> load_classifier(const std::vector<std::string>& rule_files) {
  auto classifier = names::KernelClassifier::load(rule_files);
  if (!classifier) {
    bad_input(classifier.error());
    return std::nullopt;
  }
  return std::move(classifier).value();
}

std::optional<load::Loaded> load_inputs(const std::vector<std::string>& inputs,
                                        const names::KernelClassifier& classifier, const load::LoadOptions& options) {
  auto loaded = load::load(inputs, classifier, options);
  if (!loaded) {
    bad_input(loaded.error());
    return std::nullopt;
  }
  for (const auto& w : loaded->warnings) print_warning(w.to_string());
  return std::move(loaded).value();
}

// CLI11 (2.1, App::_parse_arg) lets a `--` end the values of an option that takes several, and
// eats it: `profile --nvtx-include prefill -- python3 x.py --top 3` then took --top 3 as
// profile's own, and `analyze --tokens decode=64 -- -odd.csv` read -odd.csv as an option. One
// value per occurrence (repeat the option for more) leaves every `--` to mark the end of the
// options, in every subcommand.
void keep_separators(CLI::App* app) {
  for (CLI::Option* option : app->get_options([](CLI::Option* o) { return o->nonpositional(); })) {
    option->allow_extra_args(false);
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) keep_separators(sub);
}

// --threads N on every command that reads inputs (those that take --rules): how many threads
// a reader that splits its input, the analysis of the kernels, and `names`, use
// (common/parallel_chunks.h).
void add_threads_option(CLI::App* app) {
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_option_no_throw("--rules")) {
      sub->add_option_function<unsigned>(
             "--threads", [](const unsigned& n) { set_default_threads(n); },
             "Threads for reading and analysing large inputs (default: the CPUs kernlens may use, " +
                 std::to_string(usable_cpus()) + " here); the result is the same whatever the number")
          ->type_name("N")
          ->check(CLI::Range(1u, 1024u));
    }
    add_threads_option(sub);
  }
}

}  // namespace kernlens::cli

int main(int argc, char** argv) {
  using namespace kernlens::cli;
  using namespace kernlens;
  return_large_blocks_when_freed();
  CLI::App app{"kernlens: where an LLM workload spends its GPU time, kernel by kernel, and why.",
               "kernlens"};
  app.set_version_flag("--version", std::string("kernlens ") + KERNLENS_VERSION);
  app.require_subcommand(1);
  app.failure_message(CLI::FailureMessage::help);

  const std::vector<Command> commands = {
      add_analyze_command(app),
      add_names_command(app),
      add_profile_command(app),
      add_report_command(app),
      add_demo_command(app),
      add_export_command(app),
      add_compare_command(app),
      add_db_command(app),
      add_sweep_command(app),
  };

  add_threads_option(&app);
  keep_separators(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_error(e.what());
    std::fprintf(stderr, "Run 'kernlens --help' or 'kernlens COMMAND --help' for usage.\n");
    return kExitBadInput;
  }
  try {
    for (const auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
  } catch (const std::exception& e) {
    print_error(std::string("internal error: ") + e.what());
    return kExitBadInput;
  }
  return kExitBadInput;
}
