#include "kernlens/cli/analytic_options.h"

namespace kernlens::cli {

void add_analytic_options(CLI::App* cmd, load::WorkloadOptions& o) {
  const std::string group = "Analytic FLOPs (from the model's config)";
  cmd->add_option("--model-config", o.model_config,
                  "The model's Hugging Face config.json: analytic FLOPs of the prefill and decode stages, "
                  "MFU on them and measured / analytic (llama, mistral, qwen2, qwen3, mixtral, gpt2)")
      ->type_name("FILE")
      ->group(group);
  cmd->add_option("--batch", o.batch, "Sequences per forward pass (with --model-config)")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->group(group);
  cmd->add_option("--prompt-tokens", o.prompt_tokens, "Tokens of each prompt (with --model-config)")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->group(group);
  cmd->add_option("--decode-steps", o.decode_steps, "Decode steps of one generation (with --model-config)")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->group(group);
  cmd->add_option("--runs", o.runs,
                  "Times the program ran each stage, warm-up runs included (default: the range's "
                  "instances on a timeline, else 1)")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->group(group);
}

}  // namespace kernlens::cli
