#include "kernlens/ingest/part_merge.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace kernlens::ingest {

void append_part(model::Profile& into, model::Profile& from, std::uint32_t input_index) {
  std::vector<model::NameId> names(from.names.size());
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = into.names.intern(from.names[static_cast<model::NameId>(i)]);
  std::vector<std::uint32_t> processes(from.processes.size(), 0);
  for (std::size_t i = 1; i < processes.size(); ++i) processes[i] = into.intern_process(from.processes[i]);
  std::vector<model::StageId> stages(from.stages.size(), 0);
  for (std::size_t i = 1; i < stages.size(); ++i) stages[i] = into.intern_stage(from.stages[i]);
  std::vector<model::ConfigId> configs(from.configs.size(), 0);
  for (std::size_t i = 1; i < configs.size(); ++i) configs[i] = into.intern_config(from.configs[i]);
  const std::size_t offset = into.metric_samples.size();
  model::Profile::check_metric_pool_end(offset + from.metric_samples.size());
  into.metric_samples.insert(into.metric_samples.end(), from.metric_samples.begin(), from.metric_samples.end());
  if (const std::size_t need = into.launches.size() + from.launches.size(); need > into.launches.capacity()) {
    into.launches.reserve(std::max(need, 2 * into.launches.capacity()));  // geometric: merged often
  }
  for (model::Launch& l : from.launches) {
    l.name = names[l.name];
    l.process = processes[l.process];
    l.stage = stages[l.stage];
    l.config = configs[l.config];
    if (l.rules != 0) {
      auto rules = std::move(from.rule_sets[l.rules]);
      l.rules = 0;
      into.rules_to_add_to(l) = std::move(rules);
    }
    if (l.metrics_count > 0) l.metrics_first += static_cast<std::uint32_t>(offset);
    into.launches.push_back(std::move(l));
  }
  auto& warnings = into.inputs[input_index].warnings;
  for (Error& w : from.inputs[input_index].warnings) warnings.push_back(std::move(w));
}

}  // namespace kernlens::ingest
