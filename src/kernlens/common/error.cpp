#include "kernlens/common/error.h"

namespace kernlens {

std::string Error::to_string() const {
  if (file.empty()) return message;
  if (line > 0) return file + ":" + std::to_string(line) + ": " + message;
  return file + ": " + message;
}

}  // namespace kernlens
