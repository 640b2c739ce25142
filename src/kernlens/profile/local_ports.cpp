#include "kernlens/profile/local_ports.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace kernlens::profile {

namespace {

// Binds a socket to `port` of 127.0.0.1 (0: one the kernel picks) and closes it: the port bound,
// or 0 when it could not be.
int bind_loopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  socklen_t length = sizeof address;
  int bound = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    bound = ntohs(address.sin_port);
  }
  ::close(fd);
  return bound;
}

}  // namespace

Result<int> free_local_ports(int count, const std::vector<int>& taken) {
  constexpr int kTries = 50;
  for (int i = 0; i < kTries; ++i) {
    const int base = bind_loopback(0);
    if (base == 0) return make_error("", 0, std::string("no free port on 127.0.0.1: ") + std::strerror(errno));
    bool all_free = base + count <= 65536 && std::none_of(taken.begin(), taken.end(), [&](int other) {
      return base < other + count && other < base + count;
    });
    for (int p = base + 1; all_free && p < base + count; ++p) all_free = bind_loopback(p) == p;
    if (all_free) return base;
  }
  return make_error("", 0, fmt::format("no {} free ports in a row on 127.0.0.1", count));
}

}  // namespace kernlens::profile
