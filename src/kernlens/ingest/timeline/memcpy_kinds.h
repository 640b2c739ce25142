// CUDA memcpy kinds as Nsight Systems labels them, indexed by CUPTI's CUpti_ActivityMemcpyKind
// (CUPTI Activity API reference: UNKNOWN 0, HTOD 1, DTOH 2, HTOA 3, ATOH 4, ATOA 5, ATOD 6,
// DTOA 7, DTOD 8, HTOH 9, PTOP 10). Shared by the readers that see CUPTI's numbers (older nsys
// exports, the kernlens tracer) so that a copy has one name whichever tool recorded it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace kernlens::ingest {

inline constexpr std::array<std::string_view, 11> kMemcpyKindLabels = {
    "Unknown",          "Host-to-Device", "Device-to-Host",  "Host-to-Array",
    "Array-to-Host",    "Array-to-Array", "Array-to-Device", "Device-to-Array",
    "Device-to-Device", "Host-to-Host",   "Peer-to-Peer"};

// nsys's launch names for memory operations: "[CUDA memcpy Host-to-Device]", "[CUDA memset]".
inline std::string memcpy_launch_name(std::string_view label) { return "[CUDA memcpy " + std::string(label) + "]"; }
inline constexpr std::string_view kMemsetLaunchName = "[CUDA memset]";

}  // namespace kernlens::ingest
