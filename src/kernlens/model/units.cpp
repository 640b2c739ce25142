#include "kernlens/model/units.h"

#include <array>

namespace kernlens::model {
namespace {

// One unit word. Time converts to ns in a numerator and to seconds in a denominator
// (rates are per second), which is why it has two exponents.
//
// Nsight Compute's auto-scaling divides the printed number by the prefix's factor wherever
// the prefixed word sits: a base value of 2,614 %/byte prints as 2.614 %/Kbyte (seen in
// tests/fixtures/ncu/demo_raw_dynamic.csv vs demo_raw_base.csv, same report). So a size or
// frequency prefix multiplies back by its factor in a denominator too. Time words in a
// denominator are different words for the same rule: "cycle/nsecond" is base cycle/s / 1e9.
struct UnitWord {
  std::string_view word;
  std::string_view numerator_base;
  int numerator_pow10;
  std::string_view denominator_base;
  int denominator_pow10;  // exponent of the factor the value is multiplied by
};

constexpr std::array kUnitWords = {
    // time
    UnitWord{"ns", "ns", 0, "s", 9},
    UnitWord{"nsecond", "ns", 0, "s", 9},
    UnitWord{"us", "ns", 3, "s", 6},
    UnitWord{"usecond", "ns", 3, "s", 6},
    UnitWord{"ms", "ns", 6, "s", 3},
    UnitWord{"msecond", "ns", 6, "s", 3},
    UnitWord{"s", "ns", 9, "s", 0},
    UnitWord{"second", "ns", 9, "s", 0},
    // sizes (Nsight Compute scales bytes by powers of 1000)
    UnitWord{"byte", "byte", 0, "byte", 0},
    UnitWord{"Kbyte", "byte", 3, "byte", 3},
    UnitWord{"Mbyte", "byte", 6, "byte", 6},
    UnitWord{"Gbyte", "byte", 9, "byte", 9},
    UnitWord{"Tbyte", "byte", 12, "byte", 12},
    UnitWord{"Pbyte", "byte", 15, "byte", 15},
    // frequencies
    UnitWord{"hz", "hz", 0, "hz", 0},
    UnitWord{"Khz", "hz", 3, "hz", 3},
    UnitWord{"Mhz", "hz", 6, "hz", 6},
    UnitWord{"Ghz", "hz", 9, "hz", 9},
    UnitWord{"Thz", "hz", 12, "hz", 12},
    // counts that ncu may scale
    UnitWord{"Kinst", "inst", 3, "inst", 3},
    UnitWord{"Minst", "inst", 6, "inst", 6},
    UnitWord{"Ginst", "inst", 9, "inst", 9},
    UnitWord{"Kcycle", "cycle", 3, "cycle", 3},
    UnitWord{"Mcycle", "cycle", 6, "cycle", 6},
    UnitWord{"Gcycle", "cycle", 9, "cycle", 9},
    UnitWord{"Ksector", "sector", 3, "sector", 3},
    UnitWord{"Msector", "sector", 6, "sector", 6},
    UnitWord{"Gsector", "sector", 9, "sector", 9},
    UnitWord{"Krequest", "request", 3, "request", 3},
    UnitWord{"Mrequest", "request", 6, "request", 6},
    // unscaled words, listed so that `known` is true for them
    UnitWord{"%", "%", 0, "%", 0},
    UnitWord{"inst", "inst", 0, "inst", 0},
    UnitWord{"cycle", "cycle", 0, "cycle", 0},
    UnitWord{"sector", "sector", 0, "sector", 0},
    UnitWord{"request", "request", 0, "request", 0},
    UnitWord{"warp", "warp", 0, "warp", 0},
    UnitWord{"thread", "thread", 0, "thread", 0},
    UnitWord{"block", "block", 0, "block", 0},
    UnitWord{"register", "register", 0, "register", 0},
    UnitWord{"SM", "SM", 0, "SM", 0},
    UnitWord{"cluster", "cluster", 0, "cluster", 0},
    UnitWord{"pass", "pass", 0, "pass", 0},
    UnitWord{"wavefront", "wavefront", 0, "wavefront", 0},
};

const UnitWord* find_word(std::string_view word) {
  for (const auto& w : kUnitWords) {
    if (w.word == word) return &w;
  }
  return nullptr;
}

}  // namespace

UnitScale to_base_unit(std::string_view unit) {
  UnitScale out;
  out.known = true;
  if (unit.empty()) return out;
  bool numerator = true;
  std::size_t start = 0;
  while (true) {
    std::size_t slash = unit.find('/', start);
    std::string_view word = unit.substr(start, slash == std::string_view::npos
                                                   ? std::string_view::npos
                                                   : slash - start);
    if (!numerator) out.base_unit += '/';
    if (const UnitWord* w = find_word(word)) {
      out.base_unit += numerator ? w->numerator_base : w->denominator_base;
      out.pow10 += numerator ? w->numerator_pow10 : w->denominator_pow10;
    } else {
      out.base_unit += word;
      out.known = false;
    }
    numerator = false;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

}  // namespace kernlens::model
