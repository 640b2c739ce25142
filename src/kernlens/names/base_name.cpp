#include "kernlens/names/base_name.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernlens/common/ascii.h"

namespace kernlens::names {
namespace {

// Kernels that only wrap another type: the wrapped type names the kernel.
constexpr std::string_view kWrapperKernels[] = {"cutlass::Kernel", "cutlass::Kernel2",
                                                "cutlass::device_kernel"};
// Architecture guards around a CUTLASS kernel type, named enable_*: PyTorch's
// at::cuda::detail::enable_3x_kernel_for_sm9x<K>, FlashAttention 3's flash::enable_sm90_or_later<K>.
// They wrap it too.
constexpr std::string_view kArchGuardPrefix = "enable_";

// CUTLASS 3's GEMM kernel type: GemmUniversal<ProblemShape, CollectiveMma<DispatchPolicy,
// TileShape, ElementA, ...>, CollectiveEpilogue, ...>, one template for every GEMM.
constexpr std::string_view kCutlass3Gemm = "cutlass::gemm::kernel::GemmUniversal";

// CUTLASS element types as the names CUTLASS's own kernel generator uses.
constexpr std::pair<std::string_view, std::string_view> kCutlassElements[] = {
    {"cutlass::bfloat16_t", "bf16"},    {"cutlass::half_t", "f16"},          {"cutlass::tfloat32_t", "tf32"},
    {"cutlass::float_e4m3_t", "e4m3"},  {"cutlass::float_e5m2_t", "e5m2"},   {"cutlass::float_e2m1_t", "e2m1"},
    {"float", "f32"},                   {"double", "f64"},                   {"signed char", "s8"},
    {"cutlass::int4b_t", "s4"},         {"__nv_bfloat16", "bf16"},           {"__half", "f16"},
};

// PyTorch's TensorIterator kernels (as named once `native` and anonymous namespaces are left
// out): each is one template instantiated for every operation, so the operation is part of
// the name.
constexpr std::string_view kTensorIteratorKernels[] = {
    "at::elementwise_kernel",
    "at::vectorized_elementwise_kernel",
    "at::unrolled_elementwise_kernel",
    "at::vectorized_templated_elementwise_kernel",
    "at::index_elementwise_kernel",
    "at::reduce_kernel",
    "at::distribution_elementwise_grid_stride_kernel",
    "elementwise_kernel_with_index",
};

// Identifiers in a TensorIterator kernel's template arguments that wrap the operation's
// functor rather than name it.
constexpr std::string_view kFunctorWrappers[] = {
    "BinaryFunctor",   "AUnaryFunctor",     "BUnaryFunctor",          "gpu_kernel",
    "gpu_kernel_impl", "gpu_kernel_nocast", "gpu_kernel_impl_nocast",
};

// How PyTorch names an operation's functor or the function holding its lambda:
// CUDAFunctor_add, MulFunctor, MeanOps, sum_functor, cos_kernel_cuda, arange_cuda_out.
struct OpAffix {
  std::string_view text;
  bool is_prefix;
};
constexpr OpAffix kOpAffixes[] = {
    {"CUDAFunctorOnSelf_", true}, {"CUDAFunctor_", true}, {"_kernel_cuda", false},
    {"_kernel_impl", false},      {"_kernel", false},     {"_cuda_out", false},
    {"_functor", false},          {"Functor", false},     {"Ops", false},
};

constexpr std::string_view kAnonymousNamespaces[] = {"(anonymous namespace)", "<unnamed>"};
constexpr std::size_t kMaxUnwrapDepth = 4;

template <std::size_t N>
bool contains(const std::string_view (&list)[N], std::string_view s) {
  return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

bool is_ident_char(char c) {
  return is_ascii_alnum(c) || c == '_';
}

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// What a byte is to the bracket matcher. A table, so that the bytes between brackets (most of
// a long name) cost one load and one compare each.
enum ByteClass : std::uint8_t { kPlain, kOpen, kClose, kAngleOpen, kAngleClose };
constexpr std::array<ByteClass, 256> kByteClass = [] {
  std::array<ByteClass, 256> t{};
  for (unsigned char c : std::string_view("([{")) t[c] = kOpen;
  for (unsigned char c : std::string_view(")]}")) t[c] = kClose;
  t['<'] = kAngleOpen;
  t['>'] = kAngleClose;
  return t;
}();

bool ends_with_at(std::string_view s, std::size_t end, std::string_view word) {
  return end >= word.size() && s.substr(end - word.size(), word.size()) == word;
}

// Whether the '<' or '>' at s[i] is not a template bracket: part of an operator's name
// (operator<<, operator->), or the stray '>' of "unnamed>", which Nsight Compute sometimes
// prints for "<unnamed>".
bool is_not_bracket(std::string_view s, std::size_t i) {
  if (i == 0) return false;
  char prev = s[i - 1];
  if (s[i] == '>' && prev == '-') return true;
  if (s[i] == '>' && prev == 'd' && ends_with_at(s, i, "unnamed")) {
    return i == 7 || s[i - 8] != '<';
  }
  std::size_t j = i;
  while (j > 0 && (s[j - 1] == '<' || s[j - 1] == '>' || s[j - 1] == '=')) --j;
  if (j > 0 && s[j - 1] == ' ') --j;
  constexpr std::string_view kOperator = "operator";
  if (j == 0 || s[j - 1] != 'r' || !ends_with_at(s, j, kOperator)) return false;
  return j == kOperator.size() || !is_ident_char(s[j - kOperator.size() - 1]);
}

// Bit b set: p[b] is a bracket of any kind, for the `len` <= 16 bytes at p. Most of a long
// name lies between brackets, so full chunks are tested 16 bytes at a time where SSE2 is.
std::uint32_t bracket_mask(const char* p, std::size_t len) {
#if defined(__SSE2__)
  if (len == 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    __m128i hit = _mm_setzero_si128();
    for (char c : {'(', ')', '[', ']', '{', '}', '<', '>'}) {
      hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, _mm_set1_epi8(c)));
    }
    return static_cast<std::uint32_t>(_mm_movemask_epi8(hit));
  }
#endif
  std::uint32_t mask = 0;
  for (std::size_t b = 0; b < len; ++b) {
    if (kByteClass[static_cast<unsigned char>(p[b])] != kPlain) mask |= 1u << b;
  }
  return mask;
}

// The index just past the bracket that closes the one at s[open] (any of <([{ counts, so a
// lambda's "(instance 1)" or "{lambda()#1}" nests too); s.size() when it is never closed.
std::size_t skip_group(std::string_view s, std::size_t open) {
  int depth = 0;
  for (std::size_t chunk = open; chunk < s.size(); chunk += 16) {
    std::uint32_t mask =
        bracket_mask(s.data() + chunk, std::min<std::size_t>(16, s.size() - chunk));
    for (; mask != 0; mask &= mask - 1) {
      std::size_t i = chunk + static_cast<std::size_t>(__builtin_ctz(mask));
      ByteClass k = kByteClass[static_cast<unsigned char>(s[i])];
      if ((k == kAngleOpen || k == kAngleClose) && is_not_bracket(s, i)) continue;
      if (k == kOpen || k == kAngleOpen) {
        ++depth;
      } else if (--depth == 0) {
        return i + 1;
      }
    }
  }
  return s.size();
}

// One `::`-separated part of a qualified name: "reduce_kernel<512, 1, ...>".
struct Component {
  std::string_view ident;  // "reduce_kernel"
  std::string_view targs;  // "512, 1, ...": inside its first <...>; empty when it has none
};

// The components of a kernel's qualified name, up to its parameter list, with the return
// type and anonymous namespaces left out. Keeps the first kMax - 1 components and the last.
class QualifiedName {
 public:
  static constexpr std::size_t kMax = 8;

  void push(Component c) {
    parts_[std::min(size_, kMax - 1)] = c;
    size_ = std::min(size_ + 1, kMax);
  }
  void clear() { size_ = 0; }
  std::size_t size() const { return size_; }
  const Component& operator[](std::size_t i) const { return parts_[i]; }
  const Component& back() const { return parts_[size_ - 1]; }

 private:
  std::array<Component, kMax> parts_{};
  std::size_t size_ = 0;
};

std::size_t anonymous_namespace_at(std::string_view s, std::size_t i) {
  for (auto a : kAnonymousNamespaces) {
    if (s.compare(i, a.size(), a) == 0) return a.size();
  }
  return 0;
}

// Splits the name's head (everything before its top-level parameter list) into components.
// A top-level space ends a return type ("void ") or a qualifier, so what came before it is
// dropped.
QualifiedName parse_head(std::string_view s) {
  QualifiedName name;
  std::size_t start = 0;                           // of the current component
  std::size_t ident_end = std::string_view::npos;  // where its first bracket opens
  std::string_view targs;
  auto finish = [&](std::size_t end) {
    std::string_view ident = trim_blanks(s.substr(start, std::min(ident_end, end) - start));
    if (!ident.empty()) name.push({ident, targs});
    targs = {};
    ident_end = std::string_view::npos;
  };
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::size_t anon = (c == '(' || c == '<') ? anonymous_namespace_at(s, i) : 0; anon) {
      i += anon;
      start = i;
    } else if (c == '(') {
      break;  // the parameter list
    } else if (c == '<' && is_not_bracket(s, i)) {
      ++i;
    } else if (c == '<' || c == '[' || c == '{') {
      std::size_t end = skip_group(s, i);
      if (ident_end == std::string_view::npos) {
        ident_end = i;
        bool closed = end > i + 1 && s[end - 1] == '>';
        if (c == '<') targs = s.substr(i + 1, closed ? end - i - 2 : std::string_view::npos);
      }
      i = end;
    } else if (c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      finish(i);
      i += 2;
      start = i;
    } else if (c == ' ') {
      name.clear();
      targs = {};
      ident_end = std::string_view::npos;
      start = ++i;
    } else {
      ++i;
    }
  }
  finish(i);
  return name;
}

bool is_left_out(const QualifiedName& name, std::size_t i) {
  // "at::native::x" and "at::x" are one name: Nsight Compute leaves `native` out.
  if (name[i].ident == "native") return i > 0 && name[i - 1].ident == "at";
  // Nsight Compute sometimes loses a leading "at::<" and prints "unnamed>::x".
  return name[i].ident == "unnamed>";
}

std::string join(const QualifiedName& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (is_left_out(name, i)) continue;
    if (!out.empty()) out += "::";
    out += name[i].ident;
  }
  return out;
}

// The TensorIterator kernel `name` is, spelled as in the table; empty when it is none. Nsight
// Compute sometimes prints these without their namespace ("vectorized_elementwise_kernel").
std::string_view tensor_iterator_kernel(std::string_view name) {
  bool unqualified = name.find(':') == std::string_view::npos;
  for (std::string_view k : kTensorIteratorKernels) {
    if (k == name) return k;
    if (unqualified && k.size() > name.size() + 2 && k.ends_with(name) &&
        k.substr(k.size() - name.size() - 2, 2) == "::") {
      return k;
    }
  }
  return {};
}

std::string_view first_template_arg(std::string_view targs) {
  std::size_t i = 0;
  while (i < targs.size() && targs[i] != ',') {
    i = (targs[i] == '<' || targs[i] == '(' || targs[i] == '[' || targs[i] == '{')
            ? skip_group(targs, i)
            : i + 1;
  }
  return trim_blanks(targs.substr(0, i));
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The operation an identifier names, when it is spelled the way PyTorch names one.
std::string_view op_of_identifier(std::string_view id) {
  if (id.empty() || is_ascii_digit(id.front()) || contains(kFunctorWrappers, id)) return {};  // 128, 2ul
  for (const auto& affix : kOpAffixes) {
    if (id.size() <= affix.text.size()) continue;
    if (affix.is_prefix && id.starts_with(affix.text)) return id.substr(affix.text.size());
    if (!affix.is_prefix && id.ends_with(affix.text)) {
      return id.substr(0, id.size() - affix.text.size());
    }
  }
  return {};
}

// The operation of a TensorIterator kernel: the first identifier in its template arguments
// that names one ("mul" for ...BinaryFunctor<float, float, float, MulFunctor<float>>...).
std::string operation(std::string_view targs) {
  std::size_t i = 0;
  while (i < targs.size()) {
    if (!is_ident_char(targs[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < targs.size() && is_ident_char(targs[end])) ++end;
    std::string_view id = targs.substr(i, end - i);
    i = end;
    if (std::string_view op = op_of_identifier(id); !op.empty()) return lowercase(op);
  }
  return {};
}

// "triton_poi_fused_add_3" -> "triton_poi_fused_add": Inductor numbers kernels in the order
// it generates them, which changes from one model or version to the next.
void strip_triton_number(std::string& name) {
  constexpr std::string_view kTriton = "triton_";
  if (!name.starts_with(kTriton)) return;
  std::size_t digits = name.size();
  while (digits > 0 && is_ascii_digit(name[digits - 1])) --digits;
  std::size_t underscore = digits - 1;  // before the number; the name keeps more than "triton_"
  if (digits < name.size() && underscore > kTriton.size() && name[underscore] == '_' &&
      name[underscore - 1] != '_') {
    name.resize(underscore);
  }
}

bool is_arch_guard(std::string_view base) {
  std::size_t last = base.rfind("::");
  return base.substr(last == std::string_view::npos ? 0 : last + 2).starts_with(kArchGuardPrefix);
}

// The template arguments at the top level of `targs`, trimmed.
std::vector<std::string_view> template_args(std::string_view targs) {
  std::vector<std::string_view> args;
  while (!targs.empty()) {
    std::string_view arg = first_template_arg(targs);
    args.push_back(arg);
    std::size_t next = static_cast<std::size_t>(arg.data() - targs.data()) + arg.size();
    targs = next < targs.size() ? trim_blanks(targs.substr(next + 1)) : std::string_view();
  }
  return args;
}

// The numbers of a CuTe static shape: "cute::tuple<cute::C<128>, cute::C<(int)16>, ...>" -> "128x16x...".
std::string cute_shape(std::string_view shape) {
  std::string out;
  for (std::size_t at = shape.find("C<"); at != std::string_view::npos; at = shape.find("C<", at + 2)) {
    std::size_t i = at + 2;
    if (shape.compare(i, 5, "(int)") == 0) i += 5;
    std::size_t end = i;
    while (end < shape.size() && is_ascii_digit(shape[end])) ++end;
    if (end == i) return {};
    if (!out.empty()) out += 'x';
    out += shape.substr(i, end - i);
  }
  return out;
}

// The generation in a CUTLASS 3 dispatch policy's name: "...MainloopSm90ArrayTmaGmma..." -> "sm90".
std::string sm_generation(std::string_view text) {
  for (std::size_t at = text.find("Sm"); at != std::string_view::npos; at = text.find("Sm", at + 2)) {
    std::size_t end = at + 2;
    while (end < text.size() && is_ascii_digit(text[end])) ++end;
    if (end - at >= 4) return std::string("sm").append(text.substr(at + 2, end - at - 2));
  }
  return {};
}

// A CUTLASS 3 GEMM, named as CUTLASS's generator names its kernels: by library version, SM
// generation, grouped or not, element type and CTA tile: cutlass3x_sm90_grouped_gemm_bf16_128x16x64.
// What its template arguments do not say is left out.
std::string cutlass3_gemm_name(std::string_view targs) {
  std::vector<std::string_view> args = template_args(targs);
  std::string name = "cutlass3x";
  std::vector<std::string_view> mma;
  for (auto a : args) {
    if (a.starts_with("cutlass::gemm::collective::CollectiveMma<")) mma = template_args(parse_head(a).back().targs);
  }
  if (std::string sm = sm_generation(mma.empty() ? targs : mma[0]); !sm.empty()) (name += '_') += sm;
  if (!args.empty() && args[0].starts_with("cutlass::gemm::GroupProblemShape")) name += "_grouped";
  name += "_gemm";
  if (mma.size() > 2) {
    std::string_view element = mma[2];
    if (element.starts_with("cute::tuple<")) element = first_template_arg(parse_head(element).back().targs);
    for (const auto& [type, short_name] : kCutlassElements) {
      if (element == type) (name += '_') += short_name;
    }
  }
  if (mma.size() > 1) {
    if (std::string tile = cute_shape(mma[1]); !tile.empty()) (name += '_') += tile;
  }
  return name;
}

std::string base_name_at(std::string_view demangled, std::size_t depth) {
  std::string_view s = trim_blanks(demangled);
  QualifiedName name = parse_head(s);
  std::string base = join(name);
  if (base.empty()) return std::string(s);  // nothing but brackets or anonymous namespaces
  std::string_view targs = name.back().targs;
  if (base == kCutlass3Gemm && !targs.empty()) return cutlass3_gemm_name(targs);
  if ((contains(kWrapperKernels, base) || is_arch_guard(base)) && !targs.empty() && depth < kMaxUnwrapDepth) {
    std::string wrapped = base_name_at(first_template_arg(targs), depth + 1);
    if (!wrapped.empty()) return wrapped;
  }
  if (std::string_view kernel = tensor_iterator_kernel(base); !kernel.empty()) {
    base = kernel;
    if (std::string op = operation(targs); !op.empty()) base += "<" + op + ">";
  }
  strip_triton_number(base);
  return base;
}

}  // namespace

std::string base_name(std::string_view demangled_name) {
  return base_name_at(demangled_name, 0);
}

std::string operation_of_identifier(std::string_view identifier) {
  return lowercase(op_of_identifier(identifier));
}

TemplateNaming template_naming(std::string_view base) {
  if (contains(kWrapperKernels, base) || is_arch_guard(base) || base == kCutlass3Gemm) return TemplateNaming::kStructure;
  return tensor_iterator_kernel(base).empty() ? TemplateNaming::kNone : TemplateNaming::kOperation;
}

}  // namespace kernlens::names
