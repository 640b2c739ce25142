// Analytic FLOPs of a decoder-only transformer, from its Hugging Face config.json: the other
// source of MFU's numerator, beside the profile's measured FLOPs (never in their place).
//
// Counted as a GEMM's FLOPs are (2 per multiply-add), for every matrix product of a forward
// pass: the attention projections (q, k, v, o; grouped-query attention's smaller k and v), the
// attention itself (QK^T and PV: in a causal prefill a prompt token attends to the tokens up to
// it, within a sliding window where the model has one; a decode step attends to the whole KV
// cache, which grows by one token a step), the MLP (gated: gate, up, down; or up, down; a
// mixture of experts: the router plus the top-k experts of every token) and the LM head (every
// prompt token's logits in a prefill, as a forward pass computes them; one a sequence in a
// decode step). Elementwise work (norms, activations, rotary embedding, softmax, biases) is
// left out: about 1% of an LLM's FLOPs, which Nsight Compute does count.
//
//   auto config = parse_model_config(text, "config.json");      // errors name the key
//   double f = prefill_flops(*config, {.batch = 4, .prompt_tokens = 256});
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kernlens/common/error.h"

namespace kernlens::analysis {

struct ModelConfig {
  std::string model_type;  // as the config names it: "llama", "mixtral", "gpt2", ...
  std::int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::int64_t intermediate = 0;  // the MLP's (an expert's, in a mixture of experts)
  std::int64_t vocab = 0;
  bool gated_mlp = true;          // gate, up, down (SwiGLU); false: up, down (GPT-2)
  std::int64_t experts = 0;       // 0: a dense MLP
  std::int64_t experts_per_token = 0;
  std::int64_t sliding_window = 0;  // 0: none
  bool tied_embeddings = false;     // the LM head is the embedding matrix (parameters only)
  std::int64_t parameters = 0;      // weights, with tied embeddings counted once
};

// Reads a config.json text (`origin` names it in errors). Families: llama, mistral, qwen2,
// qwen3, mixtral, gpt2. Errors: bad JSON (with its line), an unknown model_type, a key that is
// missing or not a positive integer, sizes that do not fit together (each names its keys).
Result<ModelConfig> parse_model_config(std::string_view json_text, const std::string& origin);

// The model families parse_model_config reads, "llama, mistral, ...".
std::string known_model_types();

// What the profiled program ran: `batch` sequences of `prompt_tokens`, then `decode_steps`
// forward passes of one token per sequence.
struct Workload {
  std::int64_t batch = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t decode_steps = 0;
};

// One prefill: a forward pass over every prompt.
double prefill_flops(const ModelConfig& config, const Workload& workload);
// All decode steps of one generation (the KV cache grows from the prompt on).
double decode_flops(const ModelConfig& config, const Workload& workload);

}  // namespace kernlens::analysis
