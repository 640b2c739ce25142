// Reader for Nsight Systems' kernel summary as CSV:
//   nsys stats --report cuda_gpu_kern_sum --format csv --output - REPORT
// and its variants: the older name gpukernsum (columns "Time(%)", "Total Time (ns)",
// "Instances", "Average", ...), cuda_gpu_kern_gb_sum (GridXYZ/BlockXYZ columns, one row per
// launch configuration), `--timeunit` ("Total Time (us)"), and the report arguments `:base`,
// `:mangled` and `:nvtx-name`. Lines nsys prints before the CSV ("Processing [R] with [S]...")
// are skipped; the table ends at a blank line or at the next report's "Processing" line.
//
// A row is one kernel: it becomes one Launch standing for "Instances" executions of mean
// duration "Total Time" / "Instances". With `:nvtx-name` nsys prefixes each name with the
// innermost enclosing NVTX range, "range/kernel"; that range becomes the launch's stage. The
// split is at the last '/' outside brackets: a demangled kernel name has a '/' only inside
// template arguments or parameter lists, while a range name may hold any character. It is
// made unless nsys's preamble names a variant without nvtx-name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "kernlens/ingest/csv/header.h"
#include "kernlens/ingest/reader.h"

namespace kernlens::ingest {

Status read_nsys_stats_csv(std::string_view bytes, ReadContext& ctx);

// The first line that is a kernel summary header: fields "Instances", "Name" and one starting
// with "Total Time". nullopt when there is none.
std::optional<HeaderLocation> find_nsys_stats_header(std::string_view bytes);
// Whether `bytes` hold a kernel summary (find_nsys_stats_header).
bool is_nsys_stats_csv(std::string_view bytes);

// For output of `nsys stats` that holds no kernel summary (another report, or a report nsys
// skipped): what it is, for the error message. nullopt for anything else.
std::optional<std::string> describe_other_nsys_stats(std::string_view bytes);
// The same as a near miss, for the format registry.
std::optional<NearMiss> other_nsys_stats(std::string_view bytes);

// "range/kernel" -> {"range", "kernel"}; nullopt when there is no '/' outside brackets.
std::optional<std::pair<std::string_view, std::string_view>> split_nvtx_name(std::string_view name);

}  // namespace kernlens::ingest
