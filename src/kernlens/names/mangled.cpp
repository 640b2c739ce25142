#include "kernlens/names/mangled.h"

#include <algorithm>

#include "kernlens/common/ascii.h"
#include "kernlens/names/base_name.h"
#include "kernlens/names/demangle.h"

namespace kernlens::names {
namespace {

// Written by hand: a demangler parses (and allocates) the whole name, template arguments and
// all, which costs ten times what the base name of most kernels needs: their prefix.

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool starts_identifier(char c) { return is_ascii_alpha(c) || c == '_'; }

// The <length><identifier> at `p` (advanced past it); empty when there is none, or it is cut short.
std::string_view source_name(std::string_view m, std::size_t& p) {
  std::size_t q = p, n = 0;
  while (q < m.size() && is_ascii_digit(m[q]) && n <= m.size()) n = n * 10 + static_cast<std::size_t>(m[q++] - '0');
  if (q == p || n == 0 || n > m.size() - q || !starts_identifier(m[q])) return {};
  p = q + n;
  return m.substr(q, n);
}

std::string_view spelled(std::string_view identifier) {
  // GCC and Clang name the anonymous namespace _GLOBAL__N_1; demanglers print it so.
  return identifier.starts_with("_GLOBAL__N") ? std::string_view("(anonymous namespace)") : identifier;
}

// Calls `f(identifier)` for each length-prefixed identifier of a mangled text, in order, while
// it returns true (see mangled_identifiers()).
template <class F>
void for_each_identifier(std::string_view m, F&& f) {
  std::size_t p = m.starts_with("_Z") ? 2 : 0;
  while (p < m.size()) {
    const char c = m[p];
    if ((c == 'S' || c == 'T') && p + 1 < m.size() && (is_ascii_digit(m[p + 1]) || is_upper(m[p + 1]) || m[p + 1] == '_')) {
      while (p < m.size() && m[p] != '_') ++p;  // a substitution or template parameter: S1A_, T0_
      ++p;
    } else if ((c == 'L' || c == 'A') && p + 1 < m.size()) {
      p += 2;  // a literal (Li128E) or an array bound (A16_): its number is a value
      while (p < m.size() && (is_ascii_digit(m[p]) || m[p] == 'n')) ++p;
    } else if (is_ascii_digit(c)) {
      std::size_t q = p, n = 0;
      while (q < m.size() && is_ascii_digit(m[q]) && n <= m.size()) n = n * 10 + static_cast<std::size_t>(m[q++] - '0');
      p = q;
      if (q < m.size() && starts_identifier(m[q]) && n > 0) {
        p = q + std::min(n, m.size() - q);  // an identifier cut short ends the text
        if (!f(m.substr(q, p - q))) return;
      }
    } else {
      ++p;
    }
  }
}

// The operation of a TensorIterator kernel (names/base_name.h) from its mangled text: the first
// identifier of its arguments that names one. `own` identifiers are the function's name.
std::string operation_from_identifiers(std::string_view name, std::size_t own) {
  std::string op;
  for_each_identifier(name, [&](std::string_view id) {
    if (own > 0) return --own, true;
    op = operation_of_identifier(id);
    return op.empty();
  });
  return op;
}

// The number of identifiers of a qualified name ("at::native::f": 3).
std::size_t identifier_count(std::string_view qualified) {
  return static_cast<std::size_t>(std::count(qualified.begin(), qualified.end(), ':') / 2 + 1);
}

// The smallest run of identifiers that make a CUTLASS 3 GEMM's name: what its mangled text
// says without demangling (the tile needs the substitutions resolved: left out).
std::string cutlass3_gemm_from_identifiers(const std::vector<std::string_view>& ids) {
  std::string name = "cutlass3x";
  for (auto id : ids) {
    std::size_t at = id.find("Sm");
    while (at != std::string_view::npos) {
      std::size_t end = at + 2;
      while (end < id.size() && is_ascii_digit(id[end])) ++end;
      if (end - at >= 4) {
        name.append("_sm").append(id.substr(at + 2, end - at - 2));
        break;
      }
      at = id.find("Sm", at + 2);
    }
    if (name.size() > 9) break;
  }
  if (std::find(ids.begin(), ids.end(), "GroupProblemShape") != ids.end()) name += "_grouped";
  return name + "_gemm";
}

// A base name from the identifiers alone, for a mangled name no demangler reads.
std::string base_name_from_identifiers(std::string_view name, const std::string& prefix) {
  const std::vector<std::string_view> ids = mangled_identifiers(name);
  auto has = [&ids](auto pred) { return std::any_of(ids.begin(), ids.end(), pred); };
  const bool cutlass = has([](std::string_view id) { return id == "cutlass"; });
  if (cutlass && has([](std::string_view id) { return id == "GemmUniversal"; })) {
    return cutlass3_gemm_from_identifiers(ids);
  }
  std::string base;
  if (prefix.empty()) {
    base = base_name(name);
  } else {
    // The arguments as a list of their identifiers: enough for a wrapper's wrapped kernel and
    // a TensorIterator kernel's operation.
    std::size_t own = identifier_count(prefix);
    std::string text = prefix + "<";
    for (std::size_t i = std::min(own, ids.size()); i < ids.size(); ++i) {
      text.append(ids[i]).append(i + 1 < ids.size() ? ", " : "");
    }
    base = base_name(text + ">");
  }
  if (cutlass && !contains_ascii_ci(base, "gemm") && has([](std::string_view id) { return contains_ascii_ci(id, "gemm"); })) {
    return "cutlass::gemm";  // a CUTLASS GEMM is never an unknown kernel
  }
  return base;
}

}  // namespace

std::string mangled_function_prefix(std::string_view m) {
  if (!m.starts_with("_Z")) return {};
  std::size_t p = 2;
  if (p < m.size() && m[p] == 'L') ++p;  // internal linkage
  std::string out;
  if (p < m.size() && m[p] == 'N') {
    ++p;
    while (p < m.size() && m[p] != 'I' && m[p] != 'E') {
      std::string_view part = m.compare(p, 2, "St") == 0 ? (p += 2, std::string_view("std")) : source_name(m, p);
      if (part.empty()) return {};
      if (!out.empty()) out += "::";
      out += spelled(part);
    }
    return p < m.size() ? out : std::string();  // cut short: the name may go on
  }
  std::string_view part = source_name(m, p);
  return p < m.size() ? std::string(spelled(part)) : std::string();
}

std::vector<std::string_view> mangled_identifiers(std::string_view m) {
  std::vector<std::string_view> ids;
  for_each_identifier(m, [&ids](std::string_view id) {
    ids.push_back(id);
    return true;
  });
  return ids;
}

std::string kernel_base_name(std::string_view name) {
  if (!is_mangled(name)) return base_name(name);
  std::string prefix = mangled_function_prefix(name);
  if (!prefix.empty()) {
    std::string base = base_name(prefix);
    switch (template_naming(base)) {
      case TemplateNaming::kNone: return base;
      // The operation is the first identifier of the arguments that names one, in the same
      // order as in the demangled text (a substitution only repeats identifiers seen before).
      case TemplateNaming::kOperation: {
        std::string op = operation_from_identifiers(name, identifier_count(prefix));
        return op.empty() ? base : base.append("<").append(op).append(">");
      }
      case TemplateNaming::kStructure: break;
    }
  }
  if (auto function = demangle_function_name(name)) return base_name(*function);
  return base_name_from_identifiers(name, prefix);
}

}  // namespace kernlens::names
