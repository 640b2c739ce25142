// Unit conversion to kernlens's base units: time in ns, sizes in bytes, rates per second,
// frequencies in hz, percentages kept 0-100. Nsight Compute scales units by powers of ten
// ("us", "Kbyte", "Gbyte/s", "Ghz", older "usecond", "msecond", "cycle/nsecond"), so every
// conversion is a power of ten, which lets number parsing stay exact.
#pragma once

#include <string>
#include <string_view>

namespace kernlens::model {

struct UnitScale {
  std::string base_unit;  // the unit after conversion; the input unit when it has no scale
  int pow10 = 0;          // value_in_base = value * 10^pow10
  bool known = false;     // every part of the unit was recognised
};

// "Kbyte/block" -> {"byte/block", 3}; "us" -> {"ns", 3}; "%/Kbyte" -> {"%/byte", -3};
// "register/thread" -> {"register/thread", 0}. Never fails: unknown units pass through.
UnitScale to_base_unit(std::string_view unit);

}  // namespace kernlens::model
