// The process exit codes of DESIGN.md §3, shared by the CLI and the library parts that decide
// them (profile).
#pragma once

namespace kernlens {

inline constexpr int kExitOk = 0;
inline constexpr int kExitGateFailed = 1;  // compare found a regression
inline constexpr int kExitBadInput = 2;    // bad usage or bad input
inline constexpr int kExitToolFailed = 3;  // the profiled program or a profiler failed

}  // namespace kernlens
