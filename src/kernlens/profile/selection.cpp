#include "kernlens/profile/selection.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "kernlens/common/escape.h"
#include "kernlens/common/numeric.h"

namespace kernlens::profile {
namespace {

constexpr double kNoDeviation = std::numeric_limits<double>::infinity();

// Launches in the order ncu meets them. ncu counts --launch-skip at launch (API call) time, so
// ids (ncu launch IDs, CUDA correlation ids) are the exact order; GPU start times agree with
// it on one stream and are the fallback.
std::vector<std::size_t> kernel_launch_order(const model::Profile& profile) {
  std::vector<std::size_t> order;
  bool all_have_ids = true;
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    const auto& launch = profile.launches[i];
    if (launch.kind != model::LaunchKind::kKernel) continue;
    order.push_back(i);
    if (launch.id < 0) all_have_ids = false;
  }
  auto start = [&](std::size_t i) {
    return profile.launches[i].start_ns.value_or(std::numeric_limits<std::int64_t>::max());
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (all_have_ids) return profile.launches[a].id < profile.launches[b].id;
    return start(a) < start(b);
  });
  return order;
}

bool is_mangled(std::string_view name) {
  return name.starts_with("_Z");
}

// The exact spelling wins: mangled names are the same in every tool (and a kernel that is not
// C++, nvjet_* or extern "C", reads the same mangled or not). Demangled spellings differ: ncu
// matches "at::native::elementwise_kernel<(int)128, ...>" while its own CSV export prints
// "at::elementwise_kernel<128, ...>" (ncu 2025.3.1 on an H100) and other tools print
// "at::native::elementwise_kernel<128, ...>", so demangled names are matched on the function name.
std::pair<NameBase, std::string> choose_name_base(const model::Profile& profile,
                                                  const std::vector<model::NameId>& names) {
  bool any_mangled = std::any_of(names.begin(), names.end(),
                                 [&](model::NameId n) { return is_mangled(profile.names[n]); });
  if (any_mangled) {
    return {NameBase::kMangled,
            "the discovery spells kernel names mangled, the same in every tool"};
  }
  return {NameBase::kFunction,
          "the discovery's names are demangled, and every tool (ncu's CSV export included) spells "
          "them differently from what ncu's --kernel-name matches; the function name is the same"};
}

std::string filter_name_of(NameBase base, const std::string& source_name) {
  switch (base) {
    case NameBase::kMangled:
      return source_name;
    case NameBase::kDemangled:
      return source_name;
    case NameBase::kFunction:
      return ncu_function_name(source_name);
  }
  return source_name;
}

// Each kernel name's filter key as a dense id: launches with one key are what one
// --kernel-name alternative matches.
struct FilterKeys {
  std::vector<std::uint32_t> key_of_name;  // by NameId
  std::vector<std::string> keys;
};

FilterKeys filter_keys(const model::Profile& profile, NameBase base) {
  FilterKeys fk;
  fk.key_of_name.resize(profile.names.size());
  std::unordered_map<std::string, std::uint32_t> index;
  for (model::NameId n = 0; n < profile.names.size(); ++n) {
    std::string key = filter_name_of(base, profile.names[n]);
    auto [it, added] = index.try_emplace(key, static_cast<std::uint32_t>(fk.keys.size()));
    if (added) fk.keys.push_back(std::move(key));
    fk.key_of_name[n] = it->second;
  }
  return fk;
}

double deviation(const model::Launch& launch, double median_ns) {
  if (!launch.duration_ns || median_ns <= 0) return kNoDeviation;
  return std::abs(*launch.duration_ns - median_ns) / median_ns;
}

// A window of the launches one invocation's filter matches.
struct Window {
  std::uint64_t skip = 0;
  std::uint64_t count = 0;
  std::vector<std::size_t> representative;  // per pick of the group: index into `order`
  double score = kNoDeviation;
};

// A window of the launches whose filter key is one of the group's that holds a launch of
// every kernel of the group: among the minimal windows no longer than `max_count`, the one
// whose launches are closest to their kernels' medians (then the shorter, then the earlier);
// when none is that short, the shortest.
std::optional<Window> best_window(const model::Profile& profile,
                                  const std::vector<std::size_t>& order, const FilterKeys& fk,
                                  const std::vector<KernelPick>& picks,
                                  const std::vector<std::size_t>& group, std::uint64_t max_count) {
  std::unordered_map<model::NameId, std::size_t> slot_of_name;
  std::vector<bool> key_in_group(fk.keys.size(), false);
  for (std::size_t s = 0; s < group.size(); ++s) {
    slot_of_name[picks[group[s]].name] = s;
    key_in_group[fk.key_of_name[picks[group[s]].name]] = true;
  }
  std::vector<std::size_t> matched;  // indexes into `order` the group's filter matches
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (key_in_group[fk.key_of_name[profile.launches[order[i]].name]]) matched.push_back(i);
  }
  auto slot = [&](std::size_t m) -> std::optional<std::size_t> {
    auto it = slot_of_name.find(profile.launches[order[matched[m]]].name);
    if (it == slot_of_name.end()) return std::nullopt;
    return it->second;
  };
  std::vector<std::size_t> in_window(group.size(), 0);
  std::size_t covered = 0, left = 0;
  std::optional<Window> best;
  for (std::size_t right = 0; right < matched.size(); ++right) {
    if (auto s = slot(right); s && in_window[*s]++ == 0) ++covered;
    if (covered < group.size()) continue;
    while (true) {  // drop from the left while every kernel stays in the window
      auto s = slot(left);
      if (s && in_window[*s] == 1) break;
      if (s) --in_window[*s];
      ++left;
    }
    std::uint64_t count = right - left + 1;
    bool fits = count <= max_count;
    if (best && !fits && count >= best->count) continue;
    Window w{left, count, std::vector<std::size_t>(group.size(), 0), 0};
    std::vector<double> dev(group.size(), kNoDeviation);
    std::vector<bool> seen(group.size(), false);
    for (std::size_t m = left; m <= right; ++m) {
      auto s = slot(m);
      if (!s) continue;
      double d = deviation(profile.launches[order[matched[m]]], picks[group[*s]].median_ns);
      if (!seen[*s] || d < dev[*s]) {
        seen[*s] = true;
        dev[*s] = d;
        w.representative[*s] = matched[m];
      }
    }
    for (double d : dev) w.score += std::isfinite(d) ? d : 1e9;
    bool best_fits = best && best->count <= max_count;
    bool better =
        !best || (fits && !best_fits) ||
        (fits && (w.score < best->score || (w.score == best->score && count < best->count))) ||
        (!fits && !best_fits && count < best->count);
    if (better) best = std::move(w);
  }
  return best;
}

std::string alternation(NameBase base, const std::vector<KernelPick>& picks,
                        const std::vector<std::size_t>& group) {
  std::vector<std::string> patterns;
  for (std::size_t p : group) {
    std::string pattern = name_pattern(base, picks[p].filter_name);
    if (std::find(patterns.begin(), patterns.end(), pattern) == patterns.end()) {
      patterns.push_back(std::move(pattern));
    }
  }
  // ncu --kernel-name "regex:<expression>" is a partial match (docs: `-k regex:foo` matches
  // "foo" and "fooBar"), so the expression is anchored; `regex:"foo|bar"` is the documented
  // way to match several names with one filter.
  if (patterns.size() == 1) return "regex:^" + patterns[0] + "$";
  return "regex:^(" + fmt::format("{}", fmt::join(patterns, "|")) + ")$";
}


// ncu parses --kernel-id at ':' ("context:stream:[regex:]name:invocation"); mangled names and
// their anchored alternation have none, demangled ones ("ns::f") do.
bool kernel_id_usable(const Selection& sel) {
  if (sel.name_base != NameBase::kMangled) return false;
  return std::none_of(sel.picks.begin(), sel.picks.end(), [](const KernelPick& p) {
    return p.filter_name.find(':') != std::string::npos;
  });
}

// The 0-based count of earlier launches of the same kernel as `order[position]`.
std::uint64_t ordinal_of(const model::Profile& profile, const std::vector<std::size_t>& order,
                         std::size_t position) {
  const model::NameId name = profile.launches[order[position]].name;
  std::uint64_t ordinal = 0;
  for (std::size_t i = 0; i < position; ++i) {
    if (profile.launches[order[i]].name == name) ++ordinal;
  }
  return ordinal;
}

void set_representative(const model::Profile& profile, const std::vector<std::size_t>& order,
                        KernelPick& pick, std::size_t position, std::string_view why) {
  pick.position = position;
  pick.launch_index = order[position];
  pick.representative_ns = profile.launches[pick.launch_index].duration_ns.value_or(0);
  pick.reason = fmt::format("launch {} of {} ({:.0f} ns; median {:.0f} ns): {}",
                            ordinal_of(profile, order, position) + 1, pick.launches,
                            pick.representative_ns, pick.median_ns, why);
}

// A launch that may represent its kernel in a --kernel-id run: its 1-based number among the
// kernel's launches (ncu's invocation-nr), position in `order` and deviation from the median.
struct Acceptable {
  std::uint64_t number = 0;
  std::size_t position = 0;
  double deviation = kNoDeviation;
};

// For each kernel in `medians`, its launches no more than `tolerance` further from its median
// than its closest launch, by number. A kernel whose launches fall into two groups (one GEMM
// kernel for two shapes, as in GQA's q and k/v projections) has no launch near its median,
// and a launch of either group stands for it as well as the other.
std::unordered_map<model::NameId, std::vector<Acceptable>> acceptable_launches(
    const model::Profile& profile, const std::vector<std::size_t>& order, const FilterKeys& fk,
    const std::unordered_map<model::NameId, double>& medians, double tolerance) {
  std::unordered_map<model::NameId, std::vector<Acceptable>> all;
  std::unordered_map<std::uint32_t, std::uint64_t> seen;  // launches so far, by filter key
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& launch = profile.launches[order[i]];
    const std::uint64_t number = ++seen[fk.key_of_name[launch.name]];
    auto median = medians.find(launch.name);
    if (median == medians.end()) continue;
    all[launch.name].push_back({number, i, deviation(launch, median->second)});
  }
  for (auto& [name, launches] : all) {
    double closest = kNoDeviation;
    for (const auto& a : launches) closest = std::min(closest, a.deviation);
    const double accept = closest + tolerance;
    std::erase_if(launches, [&](const Acceptable& a) { return a.deviation > accept; });
  }
  return all;
}

const Acceptable* accepts(const std::vector<Acceptable>& launches, std::uint64_t number) {
  auto it = std::lower_bound(launches.begin(), launches.end(), number,
                             [](const Acceptable& a, std::uint64_t n) { return a.number < n; });
  return it != launches.end() && it->number == number ? &*it : nullptr;
}

// One --kernel-id run: the invocation number its kernels share and, per pick, its launch.
struct NumberGroup {
  std::uint64_t number = 0;
  std::vector<std::pair<std::size_t, Acceptable>> members;  // (pick, launch)
  double covered_ns = 0;
};

// Greedy set cover weighted by time: each round takes the number acceptable to the picks not
// yet placed that make up the most kernel time, so the hottest kernels share the first run and
// a run left over holds little. Among numbers that cover the same kernels, the one whose last
// launch comes first wins (ncu ends the program there: a repeated stage's first warm pass
// rather than its last), then the one closest to the kernels' medians.
std::vector<NumberGroup> cover_by_number(
    const std::vector<KernelPick>& picks,
    const std::unordered_map<model::NameId, std::vector<Acceptable>>& acceptable) {
  std::map<std::uint64_t, std::vector<std::pair<std::size_t, Acceptable>>> by_number;
  for (std::size_t p = 0; p < picks.size(); ++p) {
    for (const auto& a : acceptable.at(picks[p].name)) by_number[a.number].push_back({p, a});
  }
  std::vector<NumberGroup> groups;
  std::vector<bool> placed(picks.size(), false);
  for (std::size_t left = picks.size(); left > 0;) {
    const std::vector<std::pair<std::size_t, Acceptable>>* best = nullptr;
    std::uint64_t best_number = 0;
    std::size_t best_end = 0;
    double best_ns = 0, best_deviation = kNoDeviation;
    for (const auto& [number, members] : by_number) {
      double ns = 0, total = 0;
      std::size_t end = 0;  // the position of its last launch
      for (const auto& [p, a] : members) {
        if (placed[p]) continue;
        ns += picks[p].total_ns;
        total += std::isfinite(a.deviation) ? a.deviation : 1e9;
        end = std::max(end, a.position);
      }
      const bool same_kernels = ns == best_ns && ns > 0;
      if (ns > best_ns || (same_kernels && (end < best_end || (end == best_end && total < best_deviation)))) {
        best = &members, best_number = number, best_ns = ns, best_deviation = total, best_end = end;
      }
    }
    if (!best) break;  // a pick without launches; the caller reports it
    NumberGroup g{best_number, {}, 0};
    for (const auto& [p, a] : *best) {
      if (placed[p]) continue;
      placed[p] = true;
      g.members.push_back({p, a});
      g.covered_ns += picks[p].total_ns;
    }
    left -= g.members.size();
    groups.push_back(std::move(g));
  }
  return groups;
}

// ncu counts a kernel's invocations per kernel name, among the launches its NVTX filters keep:
// "::regex:^(kA|kB|kC)$:2" profiled the 2nd launch of each of the three inside the range
// (scripts/device/ncu_filter_probe.sh on the H100, ncu 2025.3.1). So kernels whose N-th
// launch represents them share one run that profiles exactly one launch of each.
//
// Every ncu run starts the program again (15-20 s of a 30 s run for a small model on the
// H100), so a run needed only by a few kernels is worth avoiding: when the next kernels by
// time fit the other runs and keep coverage, they take the place of that run's kernels.
Status merge_by_invocation_number(const model::Profile& profile,
                                  const std::vector<std::size_t>& order, const FilterKeys& fk,
                                  const std::vector<KernelPick>& ranked, Selection& sel,
                                  const SelectionOptions& options) {
  std::unordered_map<model::NameId, double> medians;
  for (const auto& k : ranked) medians[k.name] = k.median_ns;
  const auto acceptable =
      acceptable_launches(profile, order, fk, medians, options.representative_tolerance);
  for (const auto& pick : sel.picks) {
    if (!acceptable.contains(pick.name)) {
      return make_error("", 0,
                        fmt::format("kernel {} has no launch in the discovery", pick.shown_name));
    }
  }
  std::vector<NumberGroup> groups = cover_by_number(sel.picks, acceptable);
  while (groups.size() > 1) {
    // The run covering the least time, and what could replace its kernels.
    auto cheapest = std::min_element(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
      return a.covered_ns < b.covered_ns;
    });
    std::vector<KernelPick> trial;
    for (std::size_t p = 0; p < sel.picks.size(); ++p) {
      bool dropped = std::any_of(cheapest->members.begin(), cheapest->members.end(),
                                 [&](const auto& m) { return m.first == p; });
      if (!dropped) trial.push_back(sel.picks[p]);
    }
    double covered = sel.covered_ns - cheapest->covered_ns;
    for (std::size_t r = sel.picks.size(); r < ranked.size(); ++r) {
      if (covered >= options.coverage * sel.total_kernel_ns || trial.size() >= options.top) break;
      if (ranked[r].filter_name.find(':') != std::string::npos) continue;
      auto it = acceptable.find(ranked[r].name);
      bool fits = it != acceptable.end() &&
                  std::any_of(groups.begin(), groups.end(), [&](const NumberGroup& g) {
                    return &g != &*cheapest && accepts(it->second, g.number);
                  });
      if (!fits) continue;
      trial.push_back(ranked[r]);
      covered += ranked[r].total_ns;
    }
    if (covered < options.coverage * sel.total_kernel_ns) break;
    std::vector<std::string> dropped;
    for (const auto& [p, a] : cheapest->members) dropped.push_back(sel.picks[p].shown_name);
    sel.notes.push_back(fmt::format(
        "left out {} ({:.1f}% of kernel time): measuring it needed an ncu run of its own; the "
        "next kernels by time fit the other runs and keep coverage at {:.1f}%",
        fmt::join(dropped, ", "), 100 * cheapest->covered_ns / sel.total_kernel_ns,
        100 * covered / sel.total_kernel_ns));
    sel.picks = std::move(trial);
    sel.covered_ns = covered;
    groups = cover_by_number(sel.picks, acceptable);
  }
  for (const auto& g : groups) {
    NcuInvocation inv;
    for (const auto& [p, a] : g.members) {
      inv.picks.push_back(p);
      set_representative(profile, order, sel.picks[p], a.position,
                         fmt::format("within {:.0f}% of the launch closest to its median, and launch "
                                     "{} is what the other kernels of its ncu run share",
                                     100 * options.representative_tolerance, g.number));
    }
    std::sort(inv.picks.begin(), inv.picks.end());
    inv.kernel_name = alternation(sel.name_base, sel.picks, inv.picks);
    inv.kernel_id = fmt::format("::{}:{}", inv.kernel_name, g.number);
    inv.launch_count = inv.picks.size();
    inv.reason = fmt::format(
        "{} kernel(s), launch {} of each (--kernel-id counts each kernel's launches apart)",
        inv.picks.size(), g.number);
    sel.invocations.push_back(std::move(inv));
  }
  return ok_status();
}

// The invocation of a window of the launches `picks`' filter matches; sets each pick's
// representative launch.
NcuInvocation window_invocation(const model::Profile& profile, const std::vector<std::size_t>& order, Selection& sel,
                                const std::vector<std::size_t>& picks, const Window& window) {
  NcuInvocation inv;
  inv.kernel_name = alternation(sel.name_base, sel.picks, picks);
  inv.launch_skip = window.skip;
  inv.launch_count = window.count;
  inv.picks = picks;
  for (std::size_t s = 0; s < picks.size(); ++s) {
    set_representative(profile, order, sel.picks[picks[s]], window.representative[s],
                       picks.size() == 1 ? "the first launch of it closest to its median duration"
                                         : "the launch closest to its median in the window of launches, short enough "
                                           "to profile in one run, that holds every kernel of its invocation");
  }
  inv.reason = fmt::format(
      "{} kernel(s) reached by skipping {} and profiling {} of the launches the filter matches "
      "(--launch-skip counts only matching launches)",
      picks.size(), inv.launch_skip, inv.launch_count);
  return inv;
}

// Several --kernel-id runs (the kernels share no launch number: a kernel launched once per
// pass, lm_head, beside kernels launched once per layer): one run over the shortest window of
// launches that holds every kernel is cheaper when its extra launches cost less than the runs
// it saves.
void prefer_one_window(const model::Profile& profile, const std::vector<std::size_t>& order, const FilterKeys& fk,
                       Selection& sel, const SelectionOptions& options) {
  if (sel.invocations.size() < 2) return;
  std::vector<std::size_t> all(sel.picks.size());
  for (std::size_t p = 0; p < all.size(); ++p) all[p] = p;
  // The window is the first run; the runs after it are what it saves.
  double saved_launches = 0;
  for (std::size_t k = 1; k < sel.invocations.size(); ++k) {
    saved_launches += k < options.attached_runs ? options.attached_run_cost_in_launches : options.run_cost_in_launches;
  }
  const auto limit = static_cast<std::uint64_t>(static_cast<double>(all.size()) + saved_launches);
  auto w = best_window(profile, order, fk, sel.picks, all, limit);
  if (!w || w->count >= limit) return;
  // Each kernel's launch in the window must represent it as well as --kernel-id's would.
  std::unordered_map<model::NameId, double> closest;
  for (std::size_t i : order) {
    const auto& launch = profile.launches[i];
    for (const auto& pick : sel.picks) {
      if (pick.name != launch.name) continue;
      auto [it, added] = closest.try_emplace(launch.name, kNoDeviation);
      it->second = std::min(it->second, deviation(launch, pick.median_ns));
    }
  }
  for (std::size_t p = 0; p < all.size(); ++p) {
    const double d = deviation(profile.launches[order[w->representative[p]]], sel.picks[p].median_ns);
    if (d > closest[sel.picks[p].name] + options.representative_tolerance) return;
  }
  const std::size_t runs = sel.invocations.size();
  sel.invocations = {window_invocation(profile, order, sel, all, *w)};
  sel.notes.push_back(fmt::format(
      "one ncu run over a window of {} launches instead of {} runs of one launch per kernel: the kernels share no "
      "launch number, and {} more launches cost less than {} more runs ({})",
      w->count, runs, w->count - all.size(), runs - 1,
      options.attached_runs >= runs ? "each an attach to a program started beside discovery" : "each starts the program again"));
}

// Without --kernel-id: each kernel joins the first invocation whose window of matching
// launches stays short enough.
Status merge_by_window(const model::Profile& profile, const std::vector<std::size_t>& order,
                       const FilterKeys& fk, Selection& sel, const SelectionOptions& options) {
  struct Group {
    std::vector<std::size_t> picks;
    Window window;
  };
  std::vector<Group> groups;
  for (std::size_t p = 0; p < sel.picks.size(); ++p) {
    bool joined = false;
    for (auto& g : groups) {
      std::vector<std::size_t> trial = g.picks;
      trial.push_back(p);
      auto limit =
          static_cast<std::uint64_t>(options.max_window_factor * static_cast<double>(trial.size()));
      auto w = best_window(profile, order, fk, sel.picks, trial, limit);
      if (w && w->count <= limit) {
        g = Group{std::move(trial), std::move(*w)};
        joined = true;
        break;
      }
    }
    if (joined) continue;
    auto w = best_window(profile, order, fk, sel.picks, {p}, 1);
    if (!w) {
      return make_error(
          "", 0, fmt::format("kernel {} has no launch in the discovery", sel.picks[p].shown_name));
    }
    groups.push_back(Group{{p}, std::move(*w)});
  }
  for (auto& g : groups) sel.invocations.push_back(window_invocation(profile, order, sel, g.picks, g.window));
  return ok_status();
}

}  // namespace

std::string_view to_string(NameBase base) {
  switch (base) {
    case NameBase::kFunction:
      return "function";
    case NameBase::kDemangled:
      return "demangled";
    case NameBase::kMangled:
      return "mangled";
  }
  return "function";
}

std::string escape_regex(std::string_view literal) { return backslash_escape(literal, "\\^$.|?*+()[]{}"); }

std::string ncu_function_name(std::string_view demangled) {
  // Spellings of anonymous namespaces contain brackets that would upset the depth count.
  std::string name(demangled);
  for (std::string_view anon : {"(anonymous namespace)", "<unnamed>"}) {
    for (auto at = name.find(anon); at != std::string::npos; at = name.find(anon)) {
      name.replace(at, anon.size(), "anon");
    }
  }
  // Keep only what is outside every (), <> and []: the qualified name and the return type.
  std::string outer;
  int depth = 0;
  for (char c : name) {
    if (c == '(' || c == '<' || c == '[') ++depth;
    if (depth == 0) outer += c;
    if ((c == ')' || c == '>' || c == ']') && depth > 0) --depth;
  }
  // The return type ends at the last space ("void ns::f" -> "ns::f"); " const" may follow.
  while (outer.ends_with(" const")) outer.resize(outer.size() - 6);
  while (!outer.empty() && outer.back() == ' ') outer.pop_back();
  if (auto space = outer.rfind(' '); space != std::string::npos) outer.erase(0, space + 1);
  if (auto colons = outer.rfind("::"); colons != std::string::npos) outer.erase(0, colons + 2);
  return outer.empty() ? std::string(demangled) : outer;
}

std::string name_pattern(NameBase base, std::string_view filter_name) {
  if (base != NameBase::kFunction) return escape_regex(filter_name);
  // ncu's function name keeps the namespace and parameters of a non-template kernel: ncu
  // printed "demo::fill(float *, int, float)" and "indexSelectSmallIndex" for a templated one
  // (tests/fixtures/ncu/demo_profile_stdout.log, ncu_qwen_decode_stdout.log).
  return "(.*::)?" + escape_regex(filter_name) + "(\\(.*\\))?";
}

Result<Selection> select_kernels(const model::Profile& profile,
                                 const analysis::Aggregate& aggregate,
                                 const SelectionOptions& options) {
  if (!(options.coverage > 0 && options.coverage <= 1)) {
    return make_error("", 0, fmt::format("coverage must be in (0, 1], not {}", options.coverage));
  }
  if (options.top == 0) return make_error("", 0, "top must be at least 1");
  Selection sel;
  sel.total_kernel_ns = aggregate.totals.kernel_time_ns.value_or(0);
  if (sel.total_kernel_ns <= 0) {
    return make_error("", 0, "the discovery has no timed kernel launches to select from");
  }
  // Every timed kernel by total time: the first ones reaching coverage are the picks, the
  // rest may stand in for picks that would need an ncu run of their own.
  std::vector<KernelPick> ranked;
  for (const auto& row : aggregate.kernels) {
    if (!row.total_ns || *row.total_ns <= 0) continue;
    KernelPick pick;
    pick.name = row.name;
    pick.shown_name = analysis::shown_name(profile, row);
    pick.launches = row.launches;
    pick.total_ns = *row.total_ns;
    pick.share = row.share.value_or(pick.total_ns / sel.total_kernel_ns);
    ranked.push_back(std::move(pick));
  }
  std::vector<model::NameId> names;
  for (const auto& pick : ranked) {
    if (sel.covered_ns >= options.coverage * sel.total_kernel_ns || names.size() >= options.top)
      break;
    names.push_back(pick.name);
    sel.covered_ns += pick.total_ns;
  }
  std::tie(sel.name_base, sel.name_base_reason) = choose_name_base(profile, names);

  const std::vector<std::size_t> order = kernel_launch_order(profile);
  std::unordered_map<model::NameId, std::vector<double>> durations;
  for (std::size_t i : order) {
    const auto& launch = profile.launches[i];
    if (launch.duration_ns) durations[launch.name].push_back(*launch.duration_ns);
  }
  for (auto& pick : ranked) {
    pick.filter_name = filter_name_of(sel.name_base, profile.names[pick.name]);
    pick.median_ns = median(durations[pick.name]);
  }
  sel.picks.assign(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(names.size()));

  const FilterKeys fk = filter_keys(profile, sel.name_base);
  const bool by_number = kernel_id_usable(sel);
  auto merged = by_number ? merge_by_invocation_number(profile, order, fk, ranked, sel, options)
                          : merge_by_window(profile, order, fk, sel, options);
  if (!merged.ok()) return merged.error();
  if (by_number) prefer_one_window(profile, order, fk, sel, options);
  return sel;
}

}  // namespace kernlens::profile
