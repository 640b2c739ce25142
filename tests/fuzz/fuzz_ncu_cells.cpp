// libFuzzer harness: the cell decoders. Byte 0 picks a power of ten in [-12, 12]; the rest
// is split in halves, a cell and a unit, and both halves go through every decoder.
// parse_ncu_number promises exact scaling (the exponent applied to the decimal digits before
// one rounding), so plain decimals are checked against strtod, which rounds correctly.
#include <cmath>
#include <cstdlib>
#include <string>

#include "fuzz_common.h"
#include "kernlens/ingest/ncu/nvtx.h"
#include "kernlens/ingest/ncu/values.h"
#include "kernlens/model/units.h"

using namespace kernlens;

namespace {

// "[+-]digits[.digits]", short: the plain decimals strtod can check.
bool is_plain_decimal(std::string_view s) {
  if (s.empty() || s.size() > 24) return false;
  std::size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0;
  std::size_t digits = 0, dots = 0;
  for (; i < s.size(); ++i) {
    bool digit = s[i] >= '0' && s[i] <= '9';
    if (!digit && !(s[i] == '.' && digits > 0 && ++dots == 1)) return false;
    if (digit) ++digits;
  }
  return digits > 0 && s.back() != '.';
}

void check_number(std::string_view cell, int pow10) {
  ingest::NcuNumber n = ingest::parse_ncu_number(cell, pow10);
  if (!is_plain_decimal(cell)) return;
  std::string scaled = std::string(cell) + "e" + std::to_string(pow10);
  double expected = std::strtod(scaled.c_str(), nullptr);
  // Out of the normal range from_chars reports an error: there is no exact value to match.
  if (!std::isfinite(expected) || (expected != 0 && !std::isnormal(expected))) return;
  fuzz::check(n.kind == ingest::CellKind::kNumber, "a plain decimal did not parse");
  fuzz::check(n.value == expected, "parse_ncu_number is not correctly rounded");
}

void decode(std::string_view cell, int pow10) {
  check_number(cell, pow10);
  if (auto d = ingest::parse_dim3(cell)) fuzz::check(d->known(), "parse_dim3 gave a zero size");
  for (auto kind : {model::RangeKind::kPushPop, model::RangeKind::kStartEnd}) {
    std::string why;
    if (!ingest::parse_ncu_nvtx_cell(cell, kind, why)) {
      fuzz::check(!why.empty(), "parse_ncu_nvtx_cell failed without saying why");
    }
    (void)ingest::parse_ncu_nvtx_entry(cell, kind);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  int pow10 = data[0] % 25 - 12;
  std::string_view rest = fuzz::as_text(data + 1, size - 1);
  std::string_view cell = rest.substr(0, rest.size() / 2), unit = rest.substr(rest.size() / 2);
  decode(cell, pow10);
  decode(unit, pow10);
  // As the raw reader does: the unit's scale applied to the cell.
  model::UnitScale scale = model::to_base_unit(unit);
  check_number(cell, scale.pow10);
  (void)model::to_base_unit(cell);
  return 0;
}
