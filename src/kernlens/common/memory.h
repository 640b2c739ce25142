// Memory hints for the few very large buffers (a wide raw page's metric pool).
#pragma once

#include <cstddef>

namespace kernlens {

// Asks the kernel to back [data, data + bytes) with transparent huge pages where it can:
// 2 MiB pages fault in 512 times less often than 4 KiB ones. A hint; failure is harmless.
void advise_huge_pages(void* data, std::size_t bytes);

}  // namespace kernlens
