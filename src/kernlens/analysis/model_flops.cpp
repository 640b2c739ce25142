#include "kernlens/analysis/model_flops.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kernlens::analysis {
namespace {

using Json = nlohmann::json;

enum class Norm : std::uint8_t { kRms, kLayer };  // RMSNorm: a weight; LayerNorm: weight and bias
enum class Bias : std::uint8_t {
  kByKey,  // on q, k, v and o when the config's attention_bias is true
  kQkv,    // on q, k and v (Qwen2)
  kAll,    // on every linear layer (GPT-2)
};

// What a model family's config.json calls each size, and how the family is built. Data, one
// row a family: a new family is a new row.
struct Family {
  std::string_view model_type;
  std::string_view hidden, layers, heads, kv_heads, intermediate;  // kv_heads "": as many as heads
  std::int64_t intermediate_per_hidden;  // when `intermediate` is null: this x hidden (0: required)
  std::string_view experts, experts_per_token;  // "": a dense MLP
  bool gated_mlp;
  bool tied_by_default;
  std::string_view window;          // the sliding window's key ("": none); null: no window
  std::string_view window_enabled;  // a switch that must be false ("": none)
  Norm norm;
  Bias bias;
  bool qk_norm;                      // RMSNorm on q and k per head (Qwen3)
  std::string_view positions;        // learned position embeddings' count ("": rotary)
};

constexpr Family kFamilies[] = {
    {"llama", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "intermediate_size", 0,
     "", "", true, false, "", "", Norm::kRms, Bias::kByKey, false, ""},
    {"mistral", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "intermediate_size",
     0, "", "", true, false, "sliding_window", "", Norm::kRms, Bias::kByKey, false, ""},
    {"qwen2", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "intermediate_size", 0,
     "", "", true, false, "", "use_sliding_window", Norm::kRms, Bias::kQkv, false, ""},
    {"qwen3", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "intermediate_size", 0,
     "", "", true, false, "", "use_sliding_window", Norm::kRms, Bias::kByKey, true, ""},
    {"mixtral", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "intermediate_size",
     0, "num_local_experts", "num_experts_per_tok", true, false, "sliding_window", "", Norm::kRms, Bias::kByKey, false,
     ""},
    {"gpt2", "n_embd", "n_layer", "n_head", "", "n_inner", 4, "", "", false, true, "", "", Norm::kLayer, Bias::kAll,
     false, "n_positions"},
};

class ConfigReader {
 public:
  ConfigReader(const Json& json, const std::string& origin) : json_(json), origin_(origin) {}

  Error error(const std::string& message) const { return make_error(origin_, 0, message); }

  // The value of `key`, absent when the key is missing or null.
  const Json* find(std::string_view key) const {
    auto it = json_.find(std::string(key));
    return it == json_.end() || it->is_null() ? nullptr : &*it;
  }

  Result<std::int64_t> positive(std::string_view key) const {
    const Json* v = find(key);
    if (!v) return error(fmt::format("'{}' is missing", key));
    if (!v->is_number_integer() || v->get<std::int64_t>() <= 0) {
      return error(fmt::format("'{}' must be a positive integer, not {}", key, v->dump()));
    }
    return v->get<std::int64_t>();
  }

  // `key`'s value, or `fallback` when the config leaves it out.
  Result<std::int64_t> positive_or(std::string_view key, std::int64_t fallback) const {
    if (key.empty() || !find(key)) return fallback;
    return positive(key);
  }

  Result<bool> flag(std::string_view key, bool fallback) const {
    const Json* v = key.empty() ? nullptr : find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) return error(fmt::format("'{}' must be true or false, not {}", key, v->dump()));
    return v->get<bool>();
  }

 private:
  const Json& json_;
  const std::string& origin_;
};

std::int64_t parameter_count(const ModelConfig& c, const Family& f, bool attention_bias, std::int64_t positions) {
  const std::int64_t h = c.hidden, q = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim, i = c.intermediate;
  std::int64_t attention = h * q + 2 * h * kv + q * h;
  if (f.bias == Bias::kAll || (f.bias == Bias::kByKey && attention_bias)) attention += q + 2 * kv + h;
  if (f.bias == Bias::kQkv) attention += q + 2 * kv;
  std::int64_t mlp = (c.gated_mlp ? 3 : 2) * h * i + (f.bias == Bias::kAll ? i + h : 0);
  if (c.experts > 0) mlp = c.experts * mlp + c.experts * h;  // the experts and the router
  const std::int64_t norm = f.norm == Norm::kRms ? h : 2 * h;
  const std::int64_t layer = attention + mlp + 2 * norm + (f.qk_norm ? 2 * c.head_dim : 0);
  return c.layers * layer + norm + c.vocab * h * (c.tied_embeddings ? 1 : 2) + positions * h;
}

Result<ModelConfig> read_family(const ConfigReader& r, const Family& f) {
  ModelConfig c;
  c.model_type = f.model_type;
  c.gated_mlp = f.gated_mlp;
  for (auto [key, out] : {std::pair{f.hidden, &c.hidden}, std::pair{f.layers, &c.layers}, std::pair{f.heads, &c.heads},
                          std::pair{std::string_view("vocab_size"), &c.vocab}}) {
    auto v = r.positive(key);
    if (!v) return v.error();
    *out = *v;
  }
  auto intermediate = f.intermediate_per_hidden ? r.positive_or(f.intermediate, f.intermediate_per_hidden * c.hidden)
                                                : r.positive(f.intermediate);
  auto kv_heads = r.positive_or(f.kv_heads, c.heads);
  if (!intermediate) return intermediate.error();
  if (!kv_heads) return kv_heads.error();
  c.intermediate = *intermediate;
  c.kv_heads = *kv_heads;
  if (c.heads % c.kv_heads != 0) {
    return r.error(fmt::format("'{}' ({}) is not a multiple of '{}' ({})", f.heads, c.heads, f.kv_heads, c.kv_heads));
  }
  if (!r.find("head_dim") && c.hidden % c.heads != 0) {
    return r.error(fmt::format("'{}' ({}) does not divide '{}' ({}) and 'head_dim' is not given", f.heads, c.heads,
                               f.hidden, c.hidden));
  }
  auto head_dim = r.positive_or("head_dim", c.hidden / c.heads);
  if (!head_dim) return head_dim.error();
  c.head_dim = *head_dim;
  if (!f.experts.empty()) {
    auto experts = r.positive(f.experts);
    auto top_k = r.positive(f.experts_per_token);
    if (!experts) return experts.error();
    if (!top_k) return top_k.error();
    if (*top_k > *experts) {
      return r.error(fmt::format("'{}' ({}) is larger than '{}' ({})", f.experts_per_token, *top_k, f.experts, *experts));
    }
    c.experts = *experts;
    c.experts_per_token = *top_k;
  }
  if (auto enabled = r.flag(f.window_enabled, false); !enabled) {
    return enabled.error();
  } else if (*enabled) {
    return r.error(fmt::format("'{}' is true: kernlens does not model sliding-window layers of {}", f.window_enabled,
                               f.model_type));
  }
  auto window = r.positive_or(f.window, 0);
  if (!window) return window.error();
  auto tied = r.flag("tie_word_embeddings", f.tied_by_default);
  if (!tied) return tied.error();
  auto attention_bias = r.flag("attention_bias", false);
  if (!attention_bias) return attention_bias.error();
  auto positions = r.positive_or(f.positions, 0);
  if (!positions) return positions.error();
  c.sliding_window = *window;
  c.tied_embeddings = *tied;
  c.parameters = parameter_count(c, f, *attention_bias, *positions);
  return c;
}

// The line of byte `offset` of `text`, from 1.
std::int64_t line_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
}

// Query-key pairs of one sequence's causal attention over positions [first, last), each
// attending to the positions up to it, within `window` (0: no window).
double attention_pairs(std::int64_t first, std::int64_t last, std::int64_t window) {
  double pairs = 0;
  for (std::int64_t p = first; p < last; ++p) {
    pairs += static_cast<double>(window > 0 ? std::min(p + 1, window) : p + 1);
  }
  return pairs;
}

// The matrix products every token goes through in every layer: projections and MLP.
double per_token_layer_flops(const ModelConfig& c) {
  const double h = static_cast<double>(c.hidden), q = static_cast<double>(c.heads * c.head_dim),
               kv = static_cast<double>(c.kv_heads * c.head_dim), i = static_cast<double>(c.intermediate);
  const double projections = 2 * h * q + 2 * 2 * h * kv + 2 * q * h;
  const double mlp = (c.gated_mlp ? 3 : 2) * 2 * h * i;
  if (c.experts == 0) return projections + mlp;
  return projections + 2 * h * static_cast<double>(c.experts) + static_cast<double>(c.experts_per_token) * mlp;
}

// QK^T and PV over `pairs` query-key pairs, in every head.
double attention_flops(const ModelConfig& c, double pairs) {
  return 2 * 2 * static_cast<double>(c.heads * c.head_dim) * pairs;
}

double lm_head_flops(const ModelConfig& c, double tokens) {
  return 2 * static_cast<double>(c.hidden) * static_cast<double>(c.vocab) * tokens;
}

}  // namespace

std::string known_model_types() {
  std::string out;
  for (const auto& f : kFamilies) out += fmt::format("{}{}", out.empty() ? "" : ", ", f.model_type);
  return out;
}

Result<ModelConfig> parse_model_config(std::string_view json_text, const std::string& origin) {
  Json json;
  try {
    json = Json::parse(json_text.begin(), json_text.end());
  } catch (const Json::parse_error& e) {
    // nlohmann's text: "[json.exception.parse_error.101] parse error at line 19, column 8: what".
    std::string_view what = e.what();
    if (auto column = what.find(", column "); column != std::string_view::npos) {
      if (auto colon = what.find(": ", column); colon != std::string_view::npos) what.remove_prefix(colon + 2);
    }
    return make_error(origin, line_of(json_text, e.byte > 0 ? e.byte - 1 : 0), fmt::format("not JSON: {}", what));
  }
  if (!json.is_object()) return make_error(origin, 0, "not a config.json: the JSON is not an object");
  ConfigReader reader(json, origin);
  const Json* type = reader.find("model_type");
  if (!type) return reader.error(fmt::format("'model_type' is missing (one of {})", known_model_types()));
  if (!type->is_string()) return reader.error(fmt::format("'model_type' must be a string, not {}", type->dump()));
  for (const auto& f : kFamilies) {
    if (f.model_type == type->get<std::string>()) return read_family(reader, f);
  }
  return reader.error(fmt::format("'model_type' is '{}', not a model kernlens knows ({})", type->get<std::string>(),
                                  known_model_types()));
}

double prefill_flops(const ModelConfig& c, const Workload& w) {
  const double tokens = static_cast<double>(w.batch * w.prompt_tokens);
  const double pairs = static_cast<double>(w.batch) * attention_pairs(0, w.prompt_tokens, c.sliding_window);
  return static_cast<double>(c.layers) * (tokens * per_token_layer_flops(c) + attention_flops(c, pairs)) +
         lm_head_flops(c, tokens);
}

double decode_flops(const ModelConfig& c, const Workload& w) {
  const double tokens = static_cast<double>(w.batch * w.decode_steps);
  // Step s runs the token at position prompt + s, which attends to the cache and itself.
  const double pairs = static_cast<double>(w.batch) *
                       attention_pairs(w.prompt_tokens, w.prompt_tokens + w.decode_steps, c.sliding_window);
  return static_cast<double>(c.layers) * (tokens * per_token_layer_flops(c) + attention_flops(c, pairs)) +
         lm_head_flops(c, tokens);
}

}  // namespace kernlens::analysis
