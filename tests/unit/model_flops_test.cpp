// Analytic FLOPs from real Hugging Face config.json files of each family
// (tests/fixtures/model_configs/README.md says where each was published), and the config
// reader's errors, each naming the key that is wrong.
#include <gtest/gtest.h>

#include "kernlens/analysis/model_flops.h"
#include "test_util.h"

namespace kernlens::analysis {
namespace {

ModelConfig config(const std::string& name) {
  auto c = parse_model_config(test::fixture_bytes("model_configs/" + name), name);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().to_string());
  return c.ok() ? std::move(c).value() : ModelConfig{};
}

std::string config_error_of(const std::string& text) {
  auto c = parse_model_config(text, "config.json");
  EXPECT_FALSE(c.ok());
  return c.ok() ? std::string() : c.error().to_string();
}

// `text` with `from` replaced by `to` (once), for the error paths.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(ModelConfigReader, EveryFamilysRealConfig) {
  ModelConfig llama = config("llama3_8b_instruct.json");
  EXPECT_EQ(llama.model_type, "llama");
  EXPECT_EQ(llama.hidden, 4096);
  EXPECT_EQ(llama.kv_heads, 8);
  EXPECT_EQ(llama.head_dim, 128);
  EXPECT_FALSE(llama.tied_embeddings);

  ModelConfig nemo = config("mistral_nemo_base_2407.json");
  EXPECT_EQ(nemo.model_type, "mistral");
  EXPECT_EQ(nemo.head_dim, 128);  // given: hidden / heads would be 160
  EXPECT_EQ(nemo.sliding_window, 0);  // null: none

  ModelConfig qwen2 = config("qwen2_0.5b.json");
  EXPECT_EQ(qwen2.heads, 14);
  EXPECT_EQ(qwen2.kv_heads, 2);
  EXPECT_TRUE(qwen2.tied_embeddings);

  ModelConfig mixtral = config("mixtral_8x7b_v0.1.json");
  EXPECT_EQ(mixtral.experts, 8);
  EXPECT_EQ(mixtral.experts_per_token, 2);
  EXPECT_EQ(mixtral.intermediate, 14336);

  ModelConfig gpt2 = config("gpt2.json");
  EXPECT_EQ(gpt2.intermediate, 4 * 768);  // n_inner null
  EXPECT_FALSE(gpt2.gated_mlp);
  EXPECT_TRUE(gpt2.tied_embeddings);  // GPT-2's default: the config does not say
  EXPECT_EQ(gpt2.kv_heads, 12);
}

TEST(ModelConfigReader, ParametersCountTiedEmbeddingsOnce) {
  // The published counts: GPT-2's 124,439,808 (with its 1,024 learned positions), and the
  // Qwen3 config's source, which counted 1,720,574,976 in the weights' headers.
  EXPECT_EQ(config("gpt2.json").parameters, 124439808);
  EXPECT_EQ(config("qwen3_1.7b_transformers5.json").parameters, 1720574976);
  // TinyLlama's 1.1B: an embedding and an LM head of its own (2 x 32000 x 2048).
  EXPECT_EQ(config("tinyllama_1.1b_chat.json").parameters, 1100048384);
}

TEST(AnalyticFlops, CausalPrefillAndDecodeAgainstAGrowingCache) {
  ModelConfig c = config("tinyllama_1.1b_chat.json");
  // Per token and layer: q and o 2*2048*2048 each, k and v 2*2048*256 each (GQA 32/4 x 64),
  // the gated MLP 3*2*2048*5632. Attention: 4*2048 per query-key pair; a prompt of 128 has
  // 128*129/2 causal pairs. LM head 2*2048*32000 a token.
  EXPECT_EQ(prefill_flops(c, {2, 128, 0}), 532599013376.0);
  // Three decode steps after the prompt attend to 129, 130 and 131 tokens.
  EXPECT_EQ(decode_flops(c, {2, 128, 3}), 12553617408.0);
  EXPECT_EQ(decode_flops(c, {2, 128, 0}), 0);
}

TEST(AnalyticFlops, MixtureOfExpertsCountsTheRouterAndTopKExperts) {
  // Per token and layer: router 2*4096*8, two experts of 3*2*4096*14336 each, not eight.
  EXPECT_EQ(prefill_flops(config("mixtral_8x7b_v0.1.json"), {1, 16, 0}), 408026087424.0);
}

TEST(AnalyticFlops, GPT2sTwoMatrixMlp) {
  EXPECT_EQ(prefill_flops(config("gpt2.json"), {1, 10, 0}), 2472668160.0);
}

TEST(AnalyticFlops, ASlidingWindowCapsTheKeysAQueryAttends) {
  std::string text = replaced(test::fixture_bytes("model_configs/mistral_nemo_base_2407.json"),
                              "\"sliding_window\": null", "\"sliding_window\": 4");
  auto windowed = parse_model_config(text, "config.json");
  ASSERT_TRUE(windowed.ok());
  ModelConfig full = config("mistral_nemo_base_2407.json");
  // A prompt of 6: 1+2+3+4+4+4 = 18 pairs in the window instead of 21.
  const double per_pair = 4.0 * 32 * 128 * 40;
  EXPECT_DOUBLE_EQ(prefill_flops(full, {1, 6, 0}) - prefill_flops(*windowed, {1, 6, 0}), 3 * per_pair);
}

TEST(ModelConfigReader, ErrorsNameTheKeyThatIsWrong) {
  EXPECT_EQ(config_error_of(test::fixture_bytes("model_configs/bad/unknown_model_type.json")),
            "config.json: 'model_type' is 'bert', not a model kernlens knows (llama, mistral, qwen2, qwen3, mixtral, "
            "gpt2)");
  EXPECT_EQ(config_error_of(test::fixture_bytes("model_configs/bad/missing_heads.json")),
            "config.json: 'num_attention_heads' is missing");
  EXPECT_EQ(config_error_of(test::fixture_bytes("model_configs/bad/kv_heads_do_not_divide.json")),
            "config.json: 'num_attention_heads' (32) is not a multiple of 'num_key_value_heads' (5)");
  std::string tiny = test::fixture_bytes("model_configs/tinyllama_1.1b_chat.json");
  EXPECT_EQ(config_error_of(replaced(tiny, "\"hidden_size\": 2048", "\"hidden_size\": \"2048\"")),
            "config.json: 'hidden_size' must be a positive integer, not \"2048\"");
  EXPECT_EQ(config_error_of(replaced(tiny, "\"vocab_size\": 32000", "\"vocab_size\": 0")),
            "config.json: 'vocab_size' must be a positive integer, not 0");
  EXPECT_EQ(config_error_of(replaced(tiny, "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": 1")),
            "config.json: 'tie_word_embeddings' must be true or false, not 1");
  std::string qwen = test::fixture_bytes("model_configs/qwen2_0.5b.json");
  EXPECT_EQ(config_error_of(replaced(qwen, "\"use_sliding_window\": false", "\"use_sliding_window\": true")),
            "config.json: 'use_sliding_window' is true: kernlens does not model sliding-window layers of qwen2");
  std::string mixtral = test::fixture_bytes("model_configs/mixtral_8x7b_v0.1.json");
  EXPECT_EQ(config_error_of(replaced(mixtral, "\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 9")),
            "config.json: 'num_experts_per_tok' (9) is larger than 'num_local_experts' (8)");
  EXPECT_EQ(config_error_of("[1, 2]"), "config.json: not a config.json: the JSON is not an object");
  std::string truncated = config_error_of(test::fixture_bytes("model_configs/bad/truncated.json"));
  EXPECT_EQ(truncated, "config.json:19: not JSON: syntax error while parsing object key - invalid string: missing "
                       "closing quote; last read: '\"n_po'; expected string literal");
}

}  // namespace
}  // namespace kernlens::analysis
