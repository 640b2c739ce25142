// Selection: from a discovery run (every launch, timed) to the few ncu invocations of the
// deep pass.
//
//   select_kernels()  the fewest kernels, by total time, that reach `coverage` of kernel time
//                     (at most `top`); for each, one representative launch (the first whose
//                     duration is closest to the kernel's median) and how ncu reaches it:
//                     --kernel-name-base, --kernel-name regex:^...$, --launch-skip,
//                     --launch-count; then the picks merged into as few invocations as can
//                     reach them all: with mangled names, one per invocation number
//                     (--kernel-id "::regex:^(a|b)$:N" profiles the N-th launch of each
//                     kernel it matches), else one contiguous window of matching launches.
//                     A run that only a few kernels need is dropped when the next kernels
//                     by time fit the other runs and keep coverage (Selection::notes says so);
//                     when several runs remain, one run over a window of launches that holds
//                     every kernel replaces them if its extra launches cost less than the runs
//                     (a run attached to a program started beside discovery costs little).
//   escape_regex()    a literal string as a regular expression
//   ncu_function_name()  what ncu's --kernel-name-base function matches, from a demangled name
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/analysis/aggregate.h"
#include "kernlens/common/error.h"
#include "kernlens/model/profile.h"

namespace kernlens::profile {

// ncu --kernel-name-base: which spelling of a kernel's name --kernel-name matches.
enum class NameBase : std::uint8_t { kFunction, kDemangled, kMangled };
std::string_view to_string(NameBase base);

struct SelectionOptions {
  double coverage = 0.9;  // of total kernel time, 0..1
  std::size_t top = 20;   // at most this many kernels
  // How many launches one merged invocation may profile, as a multiple of the kernels it
  // covers (the window between them holds launches of kernels already covered). Below 1,
  // nothing is merged: one invocation per kernel, each at its best launch.
  double max_window_factor = 2.0;
  // With --kernel-id, a kernel's launch may represent it when its duration is no more than
  // this fraction of the median further from the median than the closest launch's: the
  // looser, the more kernels share one invocation number and so one ncu run.
  double representative_tolerance = 0.1;
  // What one more ncu run costs, in profiled launches: every run starts the program again
  // (15-30 s before the first kernel for a PyTorch model on the H100) while a launch costs
  // about 0.5-0.7 s at the roofline tier (BENCHMARKS.md, issue 6). When the kernels share no
  // launch number, one run over a window of their launches beats several runs as long as the
  // window's extra launches cost less than the runs it saves.
  double run_cost_in_launches = 30;
  // The first `attached_runs` ncu runs attach to copies of the program started beside discovery
  // (early_start.h): their start-up is paid already, and one more of them costs what the attach
  // and the program's way to its kernels under ncu cost, about 4 s on the H100 (BENCHMARKS.md,
  // issue 15), against 0.56-0.61 s a launch.
  std::size_t attached_runs = 0;
  double attached_run_cost_in_launches = 8;
};

// One kernel chosen for the deep pass and the launch of it that represents it.
struct KernelPick {
  model::NameId name = 0;
  std::string shown_name;   // demangled when the input spelled it mangled
  std::string filter_name;  // the name ncu matches under the selection's NameBase
  std::uint64_t launches = 0;
  double total_ns = 0;
  double share = 0;  // of all kernel time, 0..1
  double median_ns = 0;
  double representative_ns = 0;  // the chosen launch's duration
  std::size_t launch_index = 0;  // into Profile::launches
  std::uint64_t position = 0;    // its index among all launches in ncu's order
  std::string reason;            // why this launch, in words
};

// One deep-pass ncu run: a kernel-name filter and either one invocation number for all its
// kernels (--kernel-id) or a window of the launches it matches (--launch-skip/-count).
struct NcuInvocation {
  std::string kernel_name;         // the --kernel-name value, "regex:^(...)$"
  std::string kernel_id;           // "::regex:^(...)$:N" when it profiles each kernel's N-th launch
  std::uint64_t launch_skip = 0;   // matching launches before the window (no kernel_id)
  std::uint64_t launch_count = 0;  // launches it profiles
  std::vector<std::size_t> picks;  // into Selection::picks
  std::string reason;
};

struct Selection {
  NameBase name_base = NameBase::kDemangled;
  std::string name_base_reason;
  double total_kernel_ns = 0;
  double covered_ns = 0;          // by the picks
  std::vector<KernelPick> picks;  // by total time, descending
  std::vector<NcuInvocation> invocations;
  std::vector<std::string> notes;  // choices a user would want to know about, in words
};

// Chooses the kernels and invocations. `aggregate` must come from `profile`. Launch order
// (what --launch-skip counts) is the launches' ids when every kernel launch has one (ncu
// launch IDs, CUDA correlation ids: API call order), else their start times.
Result<Selection> select_kernels(const model::Profile& profile,
                                 const analysis::Aggregate& aggregate,
                                 const SelectionOptions& options = {});

// `literal` with every ECMAScript/PCRE metacharacter (\ ^ $ . | ? * + ( ) [ ] { }) escaped.
std::string escape_regex(std::string_view literal);

// The function name of a demangled kernel name: no return type, parameters, template
// arguments or namespaces ("void at::native::elementwise_kernel<128, 4, ...>(int, ...)" ->
// "elementwise_kernel"). A name that is not C++ ("nvjet_sm90_tst_...") comes back whole.
std::string ncu_function_name(std::string_view demangled);

// The regex (without "regex:") that matches `filter_name` under `base`, unanchored.
std::string name_pattern(NameBase base, std::string_view filter_name);

}  // namespace kernlens::profile
