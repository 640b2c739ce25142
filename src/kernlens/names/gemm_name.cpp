#include "kernlens/names/gemm_name.h"

#include <array>
#include <charconv>

#include "kernlens/common/ascii.h"

namespace kernlens::names {
namespace {

// "128x64" or "64x128x32": two or three numbers joined by 'x'.
struct Dims {
  std::array<int, 3> v{};
  std::size_t n = 0;
};

std::optional<Dims> parse_dims(std::string_view t) {
  Dims d;
  while (d.n < d.v.size()) {
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), d.v[d.n]);
    if (ec != std::errc() || end == t.data() || d.v[d.n] <= 0) return std::nullopt;
    ++d.n;
    t.remove_prefix(static_cast<std::size_t>(end - t.data()));
    if (t.empty()) break;
    if (t.front() != 'x') return std::nullopt;
    t.remove_prefix(1);
  }
  if (!t.empty() || d.n < 2) return std::nullopt;
  return d;
}

std::optional<int> parse_count(std::string_view t) {
  int v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || v <= 0) return std::nullopt;
  return v;
}

// "TNT", "NN" (cuBLAS) or "tn" (CUTLASS, xmma): the operands' layouts.
bool is_layout(std::string_view t) {
  auto all_of = [&](char a, char b) {
    for (char c : t) {
      if (c != a && c != b) return false;
    }
    return true;
  };
  return (t.size() == 2 && (all_of('T', 'N') || all_of('t', 'n'))) ||
         (t.size() == 3 && all_of('T', 'N'));
}

// A grouped GEMM (CUTLASS's GemmGrouped, kernlens's cutlass3x_..._grouped_gemm, MoE GEMMs).
bool is_grouped(std::string_view s) {
  return contains_ascii_ci(s, "grouped") || contains_ascii_ci(s, "group_gemm") || contains_ascii_ci(s, "moe");
}

std::optional<bool> is_transposed(const std::string& layout, std::size_t operand) {
  if (layout.size() <= operand) return std::nullopt;
  return layout[operand] == 'T' || layout[operand] == 't';
}

class GemmNameReader {
 public:
  void read(std::string_view token) {
    if (auto d = parse_dims(token)) {
      read_dims(*d, token);
    } else if (token.starts_with("tilesize")) {
      if (auto t = parse_dims(token.substr(8)); t && t->n == 3) set_tile(*t);
    } else if (token.starts_with("stage")) {
      if (auto n = parse_count(token.substr(5))) g_.stages = *n;
    } else if (token.starts_with("cga")) {
      if (parse_dims(token.substr(3))) g_.cluster = token.substr(3);
    } else if (g_.layout.empty() && is_layout(token)) {
      g_.layout = token;
    } else if (token == "bias") {
      g_.bias = true;
    }
  }

  GemmInfo& info() { return g_; }

 private:
  void set_tile(const Dims& d) {
    if (g_.has_tile()) return;
    g_.tile_m = d.v[0];
    g_.tile_n = d.v[1];
    g_.tile_k = d.n == 3 ? d.v[2] : 0;
  }

  // Bare AxB tokens are positional: the tile MxN, then K x stages, then the cluster.
  void read_dims(const Dims& d, std::string_view token) {
    if (d.n == 3) return set_tile(d);
    switch (plain_dims_++) {
      case 0:
        set_tile(d);
        break;
      case 1:
        if (g_.tile_k == 0) {
          g_.tile_k = d.v[0];
          g_.stages = d.v[1];
        }
        break;
      case 2:
        g_.cluster = token;
        break;
      default:
        break;
    }
  }

  GemmInfo g_;
  int plain_dims_ = 0;
};

}  // namespace

std::optional<bool> GemmInfo::transposed_a() const {
  return is_transposed(layout, 0);
}
std::optional<bool> GemmInfo::transposed_b() const {
  return is_transposed(layout, 1);
}

std::optional<GemmInfo> parse_gemm_name(std::string_view base_name) {
  GemmNameReader reader;
  std::size_t start = 0;
  while (start <= base_name.size()) {
    std::size_t end = base_name.find('_', start);
    if (end == std::string_view::npos) end = base_name.size();
    if (end > start) reader.read(base_name.substr(start, end - start));
    start = end + 1;
  }
  GemmInfo& g = reader.info();
  g.split_k = contains_ascii_ci(base_name, "splitk");
  g.grouped = is_grouped(base_name);
  bool tells = g.has_tile() || g.stages > 0 || !g.cluster.empty() || !g.layout.empty() || g.bias ||
               g.split_k || g.grouped;
  if (!tells) return std::nullopt;
  return std::move(g);
}

}  // namespace kernlens::names
