#include "kernlens/analysis/families.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "kernlens/names/demangle.h"

namespace kernlens::analysis {
namespace {

void add_kernel(FamilyRow& family, std::map<std::string, std::size_t>& stage_slots,
                const KernelRow& row) {
  ++family.kernels;
  family.launches += row.launches;
  family.timed_launches += row.timed_launches;
  if (row.total_ns) family.total_ns = family.total_ns.value_or(0) + *row.total_ns;
  for (const auto& [label, ns] : row.stage_ns) add_stage_ns(family, stage_slots, label, ns);
}

// Sorts the families by time and points the kernel rows at their new places.
std::vector<FamilyRow> sorted_by_time(std::vector<FamilyRow> families,
                                      std::vector<KernelRow>& kernels) {
  std::vector<std::uint32_t> order(families.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (int c = compare_by_time(families[a], families[b])) return c < 0;
    return families[a].cls.base_name < families[b].cls.base_name;
  });
  std::vector<std::uint32_t> place(families.size());
  std::vector<FamilyRow> sorted;
  sorted.reserve(families.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    place[order[i]] = i;
    sorted.push_back(std::move(families[order[i]]));
  }
  for (auto& row : kernels) row.family = place[row.family];
  return sorted;
}

}  // namespace

std::vector<FamilyRow> group_families(std::vector<KernelRow>& kernels,
                                      const model::Profile& profile,
                                      const names::KernelClassifier& classifier,
                                      const Totals& totals) {
  std::vector<FamilyRow> families;
  std::vector<std::map<std::string, std::size_t>> stage_slots;
  std::unordered_map<std::string, std::uint32_t> family_of_base_name;
  for (auto& row : kernels) {
    const std::string& name = profile.names[row.name];
    if (auto demangled = names::demangle(name)) row.demangled = std::move(*demangled);
    names::Classification cls = classifier.classify(name);
    auto [it, is_new] =
        family_of_base_name.try_emplace(cls.base_name, static_cast<std::uint32_t>(families.size()));
    if (is_new) {
      families.emplace_back().cls = std::move(cls);
      stage_slots.emplace_back();
    }
    row.family = it->second;
    add_kernel(families[row.family], stage_slots[row.family], row);
  }
  for (auto& family : families) finish_time_stats(family, totals);
  return sorted_by_time(std::move(families), kernels);
}

}  // namespace kernlens::analysis
