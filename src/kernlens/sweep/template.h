// "{parameter}" templates of a sweep file: "{model}-b{batch}" with model=llama, batch=8 is
// "llama-b8"; "{{" and "}}" stand for literal braces. Written by hand: a format library
// (fmt's named arguments) would throw on a missing name instead of saying which one, and
// would accept format specs ("{batch:>4}") that a sweep file has no use for.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "kernlens/common/error.h"
#include "kernlens/sweep/spec.h"

namespace kernlens::sweep {

using Values = std::map<std::string, std::string, std::less<>>;  // parameter -> value

// `t` with every "{name}" replaced by its value. Errors (at the template's line of `file`):
// a '{' never closed, a lone '}', an empty or malformed name, a name with no value (the
// message lists the parameters there are).
Result<std::string> expand(const std::string& file, const Template& t, const Values& values);

}  // namespace kernlens::sweep
