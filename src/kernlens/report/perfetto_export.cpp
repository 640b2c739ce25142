#include "kernlens/report/perfetto_export.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernlens/analysis/kernel_metrics.h"
#include "kernlens/report/format.h"

namespace kernlens::report {
namespace {

using Json = nlohmann::ordered_json;

// One execution of a launch, as written: a launch standing for `count` executions (a summary
// page) is written as `count` events end to end.
struct GpuEvent {
  std::size_t launch;
  std::int64_t start_ns;
  std::int64_t dur_ns;
};

// A Chrome trace track: a process (the GPU) and a thread (the stream). Perfetto reads both
// as unsigned 32-bit numbers.
struct Track {
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  auto operator<=>(const Track&) const = default;
};

// Overlapping kernels on one stream (programmatic dependent launch lets the next start before
// the last ends) go to extra tracks from here on: slices on one track must nest.
constexpr std::uint32_t kFirstOverflowTid = 1u << 30;

Track track_of(const model::Launch& l) {
  auto fits = [](std::int64_t v) { return v >= 0 && v < kFirstOverflowTid; };
  return Track{l.device_ordinal >= 0 ? static_cast<std::uint32_t>(l.device_ordinal) : 0u,
               fits(l.stream_id) ? static_cast<std::uint32_t>(l.stream_id) : 0u};
}

// A time in microseconds, to the nanosecond: as written, exact.
std::string micros(std::int64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }

// A duration in microseconds that every reader takes for the same nanoseconds: Perfetto's
// trace processor multiplies "dur" as a double by 1000 and truncates (4.512 us -> 4511 ns), so
// where that falls short the text gets 0.4 ns more, which readers that round to the nanosecond
// (kernlens) drop again.
std::string micros_duration(std::int64_t ns) {
  std::string text = micros(ns);
  if (static_cast<std::int64_t>(std::strtod(text.c_str(), nullptr) * 1000.0) != ns) text += '4';
  return text;
}

std::string json_text(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Every launch with a duration as events: launches with a start time where they ran, the
// others laid end to end in launch order after them (Nsight Compute serialises kernels and
// records no start times). Durations are rounded so that a launch's events sum to its total.
struct GpuEventLayout {
  std::vector<GpuEvent> events;
  std::uint64_t laid_out = 0;          // launches without a start time
  std::uint64_t without_duration = 0;  // launches that cannot be drawn
};

void add_executions(GpuEventLayout& layout, std::size_t index, const model::Launch& l, std::int64_t start) {
  const double each = *l.duration_ns;
  for (std::uint64_t k = 0; k < l.count; ++k) {
    const auto at = std::llround(each * static_cast<double>(k)), next = std::llround(each * static_cast<double>(k + 1));
    layout.events.push_back(GpuEvent{index, start + at, next - at});
  }
}

GpuEventLayout lay_out(const model::Profile& profile) {
  GpuEventLayout layout;
  std::int64_t end = 0;
  bool timed = false;
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    const auto& l = profile.launches[i];
    if (!l.duration_ns) {
      layout.without_duration += l.count;
    } else if (l.start_ns) {
      add_executions(layout, i, l, *l.start_ns);
      end = timed ? std::max(end, layout.events.back().start_ns + layout.events.back().dur_ns)
                  : layout.events.back().start_ns + layout.events.back().dur_ns;
      timed = true;
    }
  }
  for (std::size_t i = 0; i < profile.launches.size(); ++i) {
    const auto& l = profile.launches[i];
    if (!l.duration_ns || l.start_ns) continue;
    add_executions(layout, i, l, end);
    end = layout.events.back().start_ns + layout.events.back().dur_ns;
    layout.laid_out += l.count;
  }
  return layout;
}

// A slice on a track: a stage instance or a GPU event.
struct Item {
  std::int64_t start_ns, end_ns;
  bool stage;
  std::size_t index;  // into Writer::stages_ or GpuEventLayout::events
};

struct StageSlice {
  std::string name;  // the range's label ("decode")
  std::string path;  // its push/pop path ("step/decode")
  std::int64_t start_ns, end_ns;
  bool laid_out = false;  // around laid-out events: its extent is not real
};

class Writer {
 public:
  Writer(const model::Profile& profile, const analysis::Analysis& analysis)
      : profile_(profile), analysis_(analysis), resolver_(profile), layout_(lay_out(profile)) {
    for (std::size_t i = 0; i < analysis.agg.kernels.size(); ++i) row_of_name_.emplace(analysis.agg.kernels[i].name, i);
    rows_of_stage_.reserve(profile.stages.size());
    for (const auto& key : profile.stages) rows_of_stage_.push_back(analysis::stage_row_names(key));
    for (std::size_t e = 0; e < layout_.events.size(); ++e) {
      by_track_[track_of(profile.launches[layout_.events[e].launch])].push_back(e);
    }
    for (auto& [track, list] : by_track_) {
      std::stable_sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
        return layout_.events[a].start_ns < layout_.events[b].start_ns;
      });
    }
  }

  std::string write() {
    origin_ns_ = layout_.events.empty() ? 0 : layout_.events.front().start_ns;
    for (const auto& e : layout_.events) origin_ns_ = std::min(origin_ns_, e.start_ns);
    std::vector<std::string> lines = metadata();
    for (const auto& [track, list] : by_track_) write_track(track, list, lines);
    write_start_end_ranges(lines);
    std::string out = "{\"traceEvents\": [\n";
    for (std::size_t i = 0; i < lines.size(); ++i) out += lines[i] + (i + 1 < lines.size() ? ",\n" : "\n");
    out += "],\n\"otherData\": " + json_text(other_data()) + ",\n";
    out += "\"deviceProperties\": " + json_text(device_properties()) + "\n}\n";
    return out;
  }

 private:
  bool in_stage(const model::Launch& l, const std::string& path) const {
    const auto& rows = rows_of_stage_[l.stage];
    return std::find(rows.begin(), rows.end(), path) != rows.end();
  }

  // The GPU extent, on one track, of each push/pop range instance: from the first event of it
  // on the track to the last. Events laid end to end have no instances; consecutive events of
  // one range become one slice.
  std::vector<StageSlice> stage_slices(const std::vector<std::size_t>& list) const {
    std::vector<StageSlice> out;
    for (const auto& r : profile_.stage_ranges) {
      const auto& key = profile_.stages[r.stage];
      if (key.push_pop.empty()) continue;
      const std::string path = model::push_pop_path(key);
      auto first = std::lower_bound(list.begin(), list.end(), r.start_ns,
                                    [&](std::size_t e, std::int64_t t) { return layout_.events[e].start_ns < t; });
      std::optional<StageSlice> slice;
      for (auto it = first; it != list.end() && layout_.events[*it].start_ns <= r.end_ns; ++it) {
        const GpuEvent& e = layout_.events[*it];
        const auto& l = profile_.launches[e.launch];
        if (!l.start_ns || !in_stage(l, path)) continue;
        if (!slice) slice = StageSlice{model::range_label(key.push_pop.back()), path, e.start_ns, e.start_ns};
        slice->end_ns = std::max(slice->end_ns, e.start_ns + e.dur_ns);
      }
      if (slice) out.push_back(std::move(*slice));
    }
    add_laid_out_runs(list, out);
    return out;
  }

  void add_laid_out_runs(const std::vector<std::size_t>& list, std::vector<StageSlice>& out) const {
    std::vector<StageSlice> open;  // outermost first
    auto close_to = [&](std::size_t depth) {
      while (open.size() > depth) {
        out.push_back(std::move(open.back()));
        open.pop_back();
      }
    };
    for (std::size_t e : list) {
      const auto& ev = layout_.events[e];
      const auto& l = profile_.launches[ev.launch];
      if (l.start_ns) continue;
      const auto& key = profile_.stages[l.stage];
      std::size_t same = 0;
      std::string path;
      for (; same < open.size() && same < key.push_pop.size(); ++same) {
        path += (same ? "/" : "") + model::range_label(key.push_pop[same]);
        if (open[same].path != path) break;
      }
      close_to(same);
      for (std::size_t d = open.size(); d < key.push_pop.size(); ++d) {
        std::string p = d == 0 ? model::range_label(key.push_pop[0]) : open.back().path + "/" + model::range_label(key.push_pop[d]);
        open.push_back(StageSlice{model::range_label(key.push_pop[d]), std::move(p), ev.start_ns, ev.start_ns, true});
      }
      for (auto& s : open) s.end_ns = ev.start_ns + ev.dur_ns;
    }
    close_to(0);
  }

  // The track's slices in an order that nests (a parent before what it holds): stage slices
  // that would cross another are dropped, and events that would go to an overflow track.
  void write_track(Track track, const std::vector<std::size_t>& list, std::vector<std::string>& lines) {
    const std::vector<StageSlice> stages = stage_slices(list);
    std::vector<Item> items;
    for (std::size_t s = 0; s < stages.size(); ++s) items.push_back(Item{stages[s].start_ns, stages[s].end_ns, true, s});
    for (std::size_t e : list) {
      items.push_back(Item{layout_.events[e].start_ns, layout_.events[e].start_ns + layout_.events[e].dur_ns, false, e});
    }
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      return std::tuple(a.start_ns, -a.end_ns, !a.stage) < std::tuple(b.start_ns, -b.end_ns, !b.stage);
    });
    std::vector<const Item*> open;
    std::vector<std::size_t> overflow;
    for (const Item& item : items) {
      while (!open.empty() && open.back()->end_ns <= item.start_ns) open.pop_back();
      if (!open.empty() && item.end_ns > open.back()->end_ns) {  // crosses the slice it starts in
        if (item.stage) {
          ++dropped_stage_slices_;
        } else {
          overflow.push_back(item.index);
        }
        continue;
      }
      open.push_back(&item);
      lines.push_back(item.stage ? stage_event(track, stages[item.index]) : gpu_event(track, layout_.events[item.index]));
    }
    write_overflow(track, overflow, lines);
  }

  // Events that overlap on one stream, each on the first extra track where it overlaps nothing.
  void write_overflow(Track track, const std::vector<std::size_t>& events, std::vector<std::string>& lines) {
    std::vector<std::pair<Track, std::int64_t>> lanes;  // track, end of its last event
    for (std::size_t e : events) {
      const GpuEvent& ev = layout_.events[e];
      auto lane = std::find_if(lanes.begin(), lanes.end(), [&](const auto& l) { return l.second <= ev.start_ns; });
      if (lane == lanes.end()) {
        Track extra{track.pid, next_overflow_tid_++};
        lines.push_back(thread_name(extra, fmt::format("stream {} (kernels overlapping the ones above)", track.tid)));
        lanes.emplace_back(extra, 0);
        lane = lanes.end() - 1;
      }
      lane->second = ev.start_ns + ev.dur_ns;
      lines.push_back(gpu_event(lane->first, ev));
    }
  }

  std::string x_event(std::string_view cat, const std::string& name, Track track, std::int64_t start_ns, std::int64_t dur_ns,
                      const Json& args) const {
    return fmt::format(R"({{"ph": "X", "cat": "{}", "name": {}, "pid": {}, "tid": {}, "ts": {}, "dur": {}, "args": {}}})", cat,
                       json_text(Json(name)), track.pid, track.tid, micros(start_ns - origin_ns_), micros_duration(dur_ns),
                       json_text(args));
  }

  std::string stage_event(Track track, const StageSlice& s) const {
    Json args{{"stage", s.path}};
    if (s.laid_out) args["laid out"] = true;
    return x_event("gpu_user_annotation", s.name, track, s.start_ns, s.end_ns - s.start_ns, args);
  }

  std::string gpu_event(Track track, const GpuEvent& e) const {
    const auto& l = profile_.launches[e.launch];
    Json args = Json::object();
    if (!l.start_ns) args["laid out"] = true;  // read back without a start time
    if (l.device_ordinal >= 0) args["device"] = l.device_ordinal;
    if (l.stream_id >= 0) args["stream"] = l.stream_id;
    if (l.id >= 0) args["correlation"] = std::int64_t{l.id};
    if (l.kind != model::LaunchKind::kKernel) {
      if (l.bytes >= 0) args["bytes"] = l.bytes;
      const char* cat = l.kind == model::LaunchKind::kMemset ? "gpu_memset" : "gpu_memcpy";
      return x_event(cat, profile_.names[l.name], track, e.start_ns, e.dur_ns, args);
    }
    const auto row = row_of_name_.find(l.name);
    std::string name = profile_.names[l.name];
    if (row != row_of_name_.end()) name = kernel_args(row->second, args);
    launch_args(l, args);
    return x_event("kernel", name, track, e.start_ns, e.dur_ns, args);
  }

  // The kernel's names, class and verdict; returns the event's name: its base name.
  std::string kernel_args(std::size_t row_index, Json& args) const {
    const auto& row = analysis_.agg.kernels[row_index];
    const auto& cls = analysis_.agg.families[row.family].cls;
    args["full name"] = analysis::shown_name(profile_, row);
    if (!row.demangled.empty()) args["mangled name"] = profile_.names[row.name];
    args["base name"] = cls.base_name;
    args["library"] = names::to_string(cls.library);
    args["op class"] = names::to_string(cls.op_class);
    args["bottleneck"] = analysis::bottleneck_name(analysis_.kernels[row_index].verdict.kind);
    return cls.base_name;
  }

  // The launch's stage, geometry (Kineto's arg names) and what Nsight Compute measured of it.
  void launch_args(const model::Launch& l, Json& args) const {
    if (l.stage != 0) {
      const auto& key = profile_.stages[l.stage];
      args["stage"] = key.push_pop.empty() ? model::range_label(key.start_end.front()) : model::push_pop_path(key);
    }
    const model::LaunchConfig& c = profile_.config_of(l);
    if (c.grid.known()) args["grid"] = {c.grid.x, c.grid.y, c.grid.z};
    if (c.block.known()) args["block"] = {c.block.x, c.block.y, c.block.z};
    if (c.registers_per_thread >= 0) args["registers per thread"] = c.registers_per_thread;
    if (c.static_shared_bytes >= 0 && c.dynamic_shared_bytes >= 0) {
      args["shared memory"] = c.static_shared_bytes + c.dynamic_shared_bytes;
    }
    if (l.metrics_count == 0) return;
    Json ncu = Json::object();
    for (std::size_t f = 0; f < analysis::kFigureCount; ++f) {
      if (auto v = resolver_.get(l, static_cast<analysis::Figure>(f))) ncu[std::string(analysis::figure_key(static_cast<analysis::Figure>(f)))] = json_number(v->value);
    }
    if (auto flops = analysis::launch_flops(resolver_, l, nullptr)) ncu["flops"] = json_number(flops->total);
    if (auto bytes = analysis::launch_dram_bytes(resolver_, l)) ncu["dram_bytes"] = json_number(bytes->value);
    if (!ncu.empty()) args["ncu"] = std::move(ncu);
  }

  // NVTX start/end ranges need not nest: async slices of the GPU's process.
  void write_start_end_ranges(std::vector<std::string>& lines) const {
    const Track gpu{analysis_.agg.device_ordinal && *analysis_.agg.device_ordinal >= 0
                        ? static_cast<std::uint32_t>(*analysis_.agg.device_ordinal)
                        : 0u,
                    0};
    std::uint64_t id = 0;
    for (const auto& r : profile_.stage_ranges) {
      const auto& key = profile_.stages[r.stage];
      if (!key.push_pop.empty() || key.start_end.empty()) continue;
      const std::string name = json_text(Json(model::range_label(key.start_end.front())));
      for (auto [ph, t] : {std::pair{'b', r.start_ns}, std::pair{'e', r.end_ns}}) {
        lines.push_back(fmt::format(R"({{"ph": "{}", "cat": "nvtx", "name": {}, "id": {}, "pid": {}, "ts": {}}})", ph, name,
                                    id, gpu.pid, micros(t - origin_ns_)));
      }
      ++id;
    }
  }

  std::string thread_name(Track track, const std::string& name) const {
    return fmt::format(R"({{"ph": "M", "name": "thread_name", "pid": {}, "tid": {}, "args": {{"name": {}}}}})", track.pid,
                       track.tid, json_text(Json(name)));
  }

  std::vector<std::string> metadata() const {
    std::vector<std::string> out;
    std::optional<std::uint32_t> last_pid;
    for (const auto& [track, list] : by_track_) {
      if (track.pid != last_pid) {
        const model::Device* d = profile_.find_device(static_cast<std::int32_t>(track.pid));
        std::string name = fmt::format("GPU {}", track.pid);
        if (d && !d->name.empty()) name += ": " + d->name;
        out.push_back(fmt::format(R"({{"ph": "M", "name": "process_name", "pid": {}, "args": {{"name": {}}}}})", track.pid,
                                  json_text(Json(name))));
        out.push_back(fmt::format(R"({{"ph": "M", "name": "process_sort_index", "pid": {}, "args": {{"sort_index": {}}}}})",
                                  track.pid, track.pid));
        last_pid = track.pid;
      }
      const bool laid_out = std::any_of(list.begin(), list.end(), [&](std::size_t e) {
        return !profile_.launches[layout_.events[e].launch].start_ns;
      });
      out.push_back(thread_name(track, fmt::format("stream {}{}", track.tid, laid_out ? " (kernels laid end to end: no timeline)" : "")));
    }
    return out;
  }

  Json other_data() const {
    Json j;
    j["producer"] = std::string("kernlens ") + KERNLENS_VERSION;
    Json inputs = Json::array();
    for (const auto& in : profile_.inputs) inputs.push_back(in.path);
    j["inputs"] = std::move(inputs);
    j["time_origin_ns"] = origin_ns_;
    if (layout_.laid_out > 0) {
      j["laid_end_to_end"] = fmt::format("{} launches had no start time (Nsight Compute runs kernels one at a time): "
                                         "they are laid end to end in launch order, so gaps and overlaps are not real",
                                         layout_.laid_out);
    }
    if (layout_.without_duration > 0) j["launches_without_duration"] = layout_.without_duration;
    if (dropped_stage_slices_ > 0) j["stage_slices_dropped"] = dropped_stage_slices_;
    return j;
  }

  // Kineto's "deviceProperties": the GPUs, which `kernlens analyze` reads back.
  Json device_properties() const {
    Json out = Json::array();
    for (const auto& d : profile_.devices) {
      if (d.ordinal < 0) continue;
      Json j;
      j["id"] = d.ordinal;
      if (!d.name.empty()) j["name"] = d.name;
      if (auto dot = d.cc.find('.'); dot != std::string::npos) {
        j["computeMajor"] = std::atoi(d.cc.substr(0, dot).c_str());
        j["computeMinor"] = std::atoi(d.cc.substr(dot + 1).c_str());
      }
      if (d.sm_count) j["numSms"] = *d.sm_count;
      if (d.memory_total_bytes) j["totalGlobalMem"] = *d.memory_total_bytes;
      if (d.max_threads_per_sm) j["maxThreadsPerMultiprocessor"] = *d.max_threads_per_sm;
      if (d.max_shared_memory_per_sm_bytes) j["sharedMemPerMultiprocessor"] = *d.max_shared_memory_per_sm_bytes;
      out.push_back(std::move(j));
    }
    return out;
  }

  const model::Profile& profile_;
  const analysis::Analysis& analysis_;
  const analysis::MetricResolver resolver_;
  const GpuEventLayout layout_;
  std::unordered_map<model::NameId, std::size_t> row_of_name_;
  std::vector<std::vector<std::string>> rows_of_stage_;
  std::map<Track, std::vector<std::size_t>> by_track_;  // event indices by start time
  std::int64_t origin_ns_ = 0;
  std::uint64_t dropped_stage_slices_ = 0;
  std::uint32_t next_overflow_tid_ = kFirstOverflowTid;
};

}  // namespace

std::string perfetto_trace(const model::Profile& profile, const analysis::Analysis& analysis) {
  return Writer(profile, analysis).write();
}

}  // namespace kernlens::report
