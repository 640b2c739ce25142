#include "kernlens/ingest/nsys/sqlite.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "kernlens/common/chunk_reader.h"
#include "kernlens/common/file.h"
#include "kernlens/common/memory.h"
#include "kernlens/common/parallel_chunks.h"
#include "kernlens/common/step_times.h"
#include "kernlens/ingest/nsys/sqlite_calls.h"
#include "kernlens/ingest/nsys/sqlite_devices.h"
#include "kernlens/ingest/nsys/sqlite_kernels.h"
#include "kernlens/ingest/nsys/sqlite_nvtx.h"
#include "kernlens/ingest/nsys/sqlite_schema.h"
#include "kernlens/ingest/timeline/memcpy_kinds.h"
#include "kernlens/ingest/timeline/nvtx_projection.h"

namespace kernlens::ingest {
namespace {

using namespace nsys;

// The columns of OpColumn, first in every SELECT of a GPU activity table.
constexpr std::array<Column, kExtra> kOpColumns = {{{"start", true},
                                                    {"end", true},
                                                    {"deviceId"},
                                                    {"contextId"},
                                                    {"streamId"},
                                                    {"correlationId"},
                                                    {"globalPid"}}};

constexpr std::array<std::string_view, kKernelColumnCount - int{kExtra}> kKernelExtraColumns = {
    "demangledName",
    "shortName",
    "mangledName",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "registersPerThread",
    "staticSharedMemory",
    "dynamicSharedMemory"};


std::vector<Column> op_columns(std::span<const std::string_view> extra) {
  std::vector<Column> cols(kOpColumns.begin(), kOpColumns.end());
  for (auto name : extra) cols.push_back(Column{name});
  return cols;
}

class NsysReader {
 public:
  NsysReader(SqliteDb db, DbSource source, std::uint64_t file_bytes, ReadContext& ctx)
      : db_(std::move(db)),
        source_(std::move(source)),
        file_bytes_(file_bytes),
        ctx_(ctx),
        schema_(db_, ctx) {}

  // f() timed as the step `name` of the read (--verbose).
  template <class F>
  decltype(auto) step(std::string name, F&& f) {
    return timed_step(ctx_.step_times(), std::move(name), std::forward<F>(f));
  }

  Status read() {
    if (auto s = step("schema and strings", [&] { return read_start(); }); !s) return s;
    start_reading_nvtx_and_calls();
    for (auto step : {&NsysReader::read_gpus, &NsysReader::read_process_names, &NsysReader::read_kernels}) {
      if (auto s = (this->*step)(); !s) return nvtx_error_first(unattributed(s));
    }
    if (auto s = step("memory operations", [&] { return read_memory_ops(); }); !s) return unattributed(s);
    if (const auto& error = calls().error())
      return unattributed(schema_.unreadable("table " + std::string(kRuntime) + ": " + error->message));
    trace_end_ = std::max(trace_end_, calls().latest_end_ns());
    step("stages", [&] { attribute_to_stages(); });
    fill_devices();
    if (ctx_.progress) ctx_.progress(file_bytes_);
    return ok_status();
  }

 private:
  Status read_start() {
    if (auto s = schema_.load(); !s) return s;
    if (auto s = check_is_nsys_export(); !s) return s;
    if (auto s = strings_.open(schema_); !s) return s;
    reserve();
    return ok_status();
  }

  // The NVTX ranges, then the CUDA API calls (kept as the ranges around them, not as rows): on
  // threads of their own beside the kernel rows, with a connection of their own, where there
  // are threads (the ranges were a serial step before the rows); else on this thread and
  // connection when the calls are first needed, after the rows.
  void start_reading_nvtx_and_calls() {
    const unsigned threads = reader_threads(ctx_, file_bytes_);
    Schema* schema = &schema_;
    Strings* strings = &strings_;
    if (threads > 1 && ChunkReader::worth_reading_ahead()) {
      if (auto db = source_.open_for_a_scan()) {
        side_ = std::make_unique<SideConnection>(std::move(*db), ctx_);
        if (side_->schema.load() && side_->strings.open(side_->schema)) {
          schema = &side_->schema;
          strings = &side_->strings;
        } else {
          side_.reset();  // the reader's own connection, after the rows
        }
      }
    }
    nvtx_.emplace(*schema, *strings, file_bytes_);
    std::shared_ptr<const ThreadHandover> freed = threads_freed_.handover;
    api_calls_ = std::async(side_ ? std::launch::async : std::launch::deferred, [this, schema, threads, freed] {
      {
        const CpuTally::Charge charge(tally(cpu_.nvtx));
        nvtx_status_ = nvtx_->read();
      }
      if (!nvtx_status_) return CallsRead{};
      CallsRead read{start_reading_api_calls(*schema, source_, file_bytes_, threads, nvtx_->ranges(), calls_count_, freed, tally(cpu_.calls)).get(), {}};
      // Made and its ranges labelled here, on the calls' thread beside the kernel rows' last
      // parts, not after them (at 8 M launches 6-8 ms on one thread, its tables being fresh
      // pages, and 4-7 ms on every thread).
      const CpuTally::Charge charge(tally(cpu_.calls));
      read.projection.emplace(nvtx_->ranges(), read.calls.take_sets());
      read.projection->label_ranges(threads);
      return read;
    });
  }

  // An error of the NVTX ranges is the read's, before any other: one thread read them first.
  // The launches read are dropped then, as none had been read.
  Status nvtx_error_first(Status s) {
    calls();
    if (nvtx_status_) return s;
    ctx_.profile.launches.resize(first_launch_);
    return nvtx_status_;
  }

  // The memory operations, attributed like the kernels: into one attribution, added at the end.
  Status read_memory_ops() {
    Status s = read_memcpys();
    if (s) s = read_memsets();
    if (s) add_attribution(memory_ops_);
    return s;
  }

  // The launches read before an error, as attributed before attribution was finished: to no
  // stage and no thread.
  Status unattributed(Status s) {
    auto& launches = ctx_.profile.launches;
    for (std::size_t i = first_launch_; i < launches.size(); ++i) {
      launches[i].stage = 0;
      launches[i].thread_id = model::kUnknown;
    }
    return s;
  }

  Status check_is_nsys_export() {
    bool nsys = std::any_of(kMetadataTables.begin(), kMetadataTables.end(),
                            [&](auto t) { return schema_.has(t); }) ||
                schema_.has(kStrings) || schema_.has(kNvtx) ||
                schema_.has_any_table_starting("CUPTI_ACTIVITY_KIND_");
    if (!nsys) {
      return ctx_.error(0,
                        "an SQLite database, but not an Nsight Systems export: it has none of the "
                        "tables `nsys export --type sqlite` writes (META_DATA_EXPORT, StringIds, "
                        "CUPTI_ACTIVITY_KIND_*)");
    }
    if (!schema_.has(kKernels)) {
      return ctx_.error(0, "no table " + std::string(kKernels) + schema_.version_note() +
                               ": the report holds no CUDA kernels (nsys creates a table only for "
                               "what it recorded; profile with --trace=cuda)");
    }
    if (!schema_.has(kStrings)) {
      return ctx_.error(
          0, "no table StringIds" + schema_.version_note() + ": kernel names cannot be read");
    }
    return ok_status();
  }

  // Room for every launch; with threads, the kernels' pages faulted in on them while this
  // thread reads the NVTX ranges (zeroing 88 MB of fresh pages was 12-14 ms of the kernel rows'
  // step at 16 threads, with the CPUs idle during the ranges), and the counts that tell whether
  // the kernel parts and the calls' ranges read every row (RowCount) begun at once: one
  // thread's pass over a whole table each, they ended after the parts when begun beside them.
  void reserve() {
    const std::size_t kernels = schema_.row_estimate(kKernels, file_bytes_);
    const std::size_t ops = kernels + schema_.row_estimate(kMemcpy, file_bytes_) + schema_.row_estimate(kMemset, file_bytes_);
    auto& launches = ctx_.profile.launches;
    first_launch_ = launches.size();
    reserve_huge(launches, launches.size() + ops);
    const unsigned threads = reader_threads(ctx_, file_bytes_);
    kernel_parts_ = plan_kernel_parts();
    if (kernel_parts_.size() > 1) kernel_rows_count_ = RowCount(source_, std::string(kKernels), tally(cpu_.kernel_rows_count));
    calls_count_ = begin_api_calls_count(schema_, source_, threads, tally(cpu_.calls_count));
    if (threads < 2 || launches.capacity() < first_launch_ + kernels) return;
    faulted_launches_ = kernels;
    kernel_pages_.emplace(launches.data() + first_launch_, kernels * sizeof(model::Launch), threads, tally(cpu_.kernel_pages));
  }

  // reserve()'s prefault of the launches' pages done: before a launch is written beyond the
  // slots read_kernel_ranges makes as it follows the prefault, or the buffer moves.
  void wait_for_kernel_pages() const {
    if (kernel_pages_) kernel_pages_->wait();
  }

  Error row_error(std::string_view table, std::uint64_t row, const std::string& what) const {
    return ctx_.error(0, std::string(table) + " row " + std::to_string(row) + ": " + what);
  }

  // ---- devices and processes --------------------------------------------------------------

  Status read_gpus() {
    auto gpus = read_nsys_gpus(schema_);
    if (!gpus) return gpus.error();
    gpus_ = std::move(gpus).value();
    return ok_status();
  }

  // PROCESSES (schema 2.x): process names by globalPid.
  Status read_process_names() {
    static constexpr std::array kColumns = {Column{"globalPid", true}, Column{"name"}};
    if (!schema_.has("PROCESSES")) return ok_status();
    auto stmt = schema_.select("PROCESSES", kColumns);
    if (!stmt) return stmt.error();
    while (stmt->step()) process_names_[stmt->int64(0)] = std::string(stmt->text(1));
    return schema_.finished(*stmt, "PROCESSES");
  }

  std::uint32_t process_index(std::int64_t global_pid) {
    auto [it, is_new] = process_index_.try_emplace(global_pid, 0);
    if (is_new) {
      auto name = process_names_.find(global_pid);
      it->second = ctx_.profile.intern_process(model::ProcessInfo{
          "", pid_of(global_pid), name == process_names_.end() ? std::string() : name->second});
    }
    return it->second;
  }

  void fill_devices() {
    for (std::int32_t ordinal : devices_used_) {
      auto it = gpus_.find(ordinal);
      if (it == gpus_.end()) continue;
      if (auto conflict = ctx_.profile.device(ordinal).fill_from(it->second)) ctx_.warn(0, *conflict + "; ranks that disagree on the GPU are not one GPU: peaks and MFU use the earlier input's");
    }
  }

  // ---- GPU activity -----------------------------------------------------------------------

  // The columns every GPU activity row has (time, where it ran, who launched it), for the
  // tables read in one scan.
  Status read_op(const SqliteStatement& stmt, const IntRow& values, std::string_view table, std::uint64_t row,
                 model::Launch& l) {
    OpIds ids;
    if (auto bad = read_op_row(stmt, values, ctx_.input_index, l, ids)) return row_error(table, row, *bad);
    trace_end_ = std::max(trace_end_, ids.end);
    if (ids.global_pid) l.process = process_index(*ids.global_pid);
    attribute(l, ids.global_pid ? calls().find(*ids.global_pid, l.id) : std::nullopt, memory_ops_);
    return ok_status();
  }

  // What attributing a stretch of launches adds to the reader: the devices in the order first
  // met, the kernels without a call, and the stage projection's updates for each set of ranges
  // around a call. StageProjection's updates are minima and maxima, so the extremes of a set's
  // launches add what the launches add one by one, in any order: a stretch is attributed on a
  // thread of its own and added in a few updates.
  struct SetExtremes {
    std::int64_t thread;
    std::uint64_t rank;  // the least (thread, rank) of the calls
    bool kernels = false;
    std::uint64_t order = 0;  // of the kernels: the least call key, earliest start, latest end
    std::int64_t start_ns = 0, end_ns = 0;
  };
  struct alignas(kThreadStateAlign) Attribution {  // a chunk's, written launch by launch
    std::vector<std::int32_t> devices;
    std::size_t unmatched_kernels = 0;
    std::unordered_map<std::uint32_t, SetExtremes> sets;
    std::pair<std::uint32_t, SetExtremes*> last{0, nullptr};  // launches come in runs of a set
  };

  // Attributes the launch to its call: the call's thread, and for now the index of the call's
  // place as its stage (attribute_to_stages makes that a stage once every set of ranges that
  // launched work is known). Reads only the calls: any number of threads at once.
  void attribute(model::Launch& l, std::optional<std::uint32_t> entry, Attribution& a) const {
    if (l.device_ordinal >= 0 && std::find(a.devices.begin(), a.devices.end(), l.device_ordinal) == a.devices.end())
      a.devices.push_back(l.device_ordinal);
    if (!entry) return;
    const bool kernel = l.kind == model::LaunchKind::kKernel;
    if (*entry == ApiCalls::kNoCall) {
      a.unmatched_kernels += kernel;
      return;
    }
    const CallPlace& place = calls_->place(*entry);
    l.thread_id = tid_of(place.thread);
    l.stage = calls_->place_index(*entry) + 1;
    const std::uint64_t rank = calls_->rank(*entry);
    if (!a.last.second || a.last.first != place.set) {
      auto [it, is_new] = a.sets.try_emplace(place.set, SetExtremes{place.thread, rank});
      a.last = {place.set, &it->second};
    }
    SetExtremes& e = *a.last.second;
    if (std::tie(place.thread, rank) < std::tie(e.thread, e.rank)) std::tie(e.thread, e.rank) = std::tie(place.thread, rank);
    if (!kernel) return;
    // Kernels by call key: the order the ranges' stages were always named in.
    const std::uint64_t order = calls_->key_of(*entry);
    const std::int64_t start = *l.start_ns, end = start + static_cast<std::int64_t>(*l.duration_ns);
    if (!e.kernels) {
      e.kernels = true;
      std::tie(e.order, e.start_ns, e.end_ns) = std::tie(order, start, end);
      return;
    }
    e.order = std::min(e.order, order);
    e.start_ns = std::min(e.start_ns, start);
    e.end_ns = std::max(e.end_ns, end);
  }

  void add_attribution(const Attribution& a) {
    add_devices_and_unmatched(a);
    if (!a.sets.empty()) add_to_projection(projection(), a);
  }
  // The devices in the order first met: attributions are added so in order.
  void add_devices_and_unmatched(const Attribution& a) {
    for (std::int32_t d : a.devices) {
      if (std::find(devices_used_.begin(), devices_used_.end(), d) == devices_used_.end()) devices_used_.push_back(d);
    }
    unmatched_kernels_ += a.unmatched_kernels;
  }
  // Minima and maxima (SetExtremes): the same in any order of the attributions.
  static void add_to_projection(StageProjection& p, const Attribution& a) {
    for (const auto& [set, e] : a.sets) {
      p.add_call(set, e.thread, e.rank);
      if (e.kernels) p.add_kernel(set, e.order, e.start_ns, e.end_ns);
    }
  }

  ApiCalls& calls() {
    if (!calls_) {
      free_threads_for_calls();  // whatever was read before
      CallsRead read = api_calls_.get();
      calls_ = std::move(read.calls);
      if (read.projection) projection_.emplace(std::move(*read.projection));
    }
    return *calls_;
  }

  // The kernel rows' threads are free: the calls' read in ranges, begun on half of them, takes
  // the rest (on 16 threads the calls ran on 8 for ~40 ms after the kernel rows, 8 CPUs idle).
  // Each kernel-row thread is handed over as it runs out of parts (read_parts_on_own_connection).
  void free_threads_for_calls() { threads_freed_.handover->release_all(); }

  // Made with the calls where they were read (an error of the NVTX ranges reads none).
  StageProjection& projection() {
    calls();
    if (!projection_) projection_.emplace(nvtx_->ranges(), calls_->take_sets());
    return *projection_;
  }

  // The kernel table, in rowid ranges on as many threads as --threads allows, merged in rowid
  // order: the same launches, names and errors as one scan.
  Status read_kernels() {
    if (!std::any_of(kKernelExtraColumns.begin(), kKernelExtraColumns.begin() + 3,
                     [&](auto c) { return schema_.has_column(kKernels, c); })) {
      return ctx_.error(0, "table " + std::string(kKernels) +
                               " has none of the name columns "
                               "demangledName, shortName, mangledName" +
                               schema_.version_note());
    }
    std::vector<KernelPart> parts = std::move(kernel_parts_);
    if (parts.empty()) parts.emplace_back();  // one scan
    auto cols = op_columns(kKernelExtraColumns);
    auto& launches = ctx_.profile.launches;
    const std::size_t first = launches.size();
    if (parts.size() > 1) {
      auto sql = schema_.select_range_sql(kKernels, cols);
      if (!sql) return sql.error();
      const std::string name = in_parts("kernel rows", parts.size());
      if (step(name, [&] { return read_kernel_ranges(*sql, parts, first); })) return merge_kernel_parts(parts, first);
      parts.assign(1, KernelPart{});  // damage or a bad row: one scan, as one thread reads it
    }
    wait_for_kernel_pages();
    auto stmt = schema_.select(kKernels, cols);
    if (!stmt) return stmt.error();
    step("kernel rows", [&] {
      read_kernel_part(*stmt, ctx_.input_index, false, parts[0],
                       [&](model::Launch&& l) { launches.push_back(std::move(l)); });
    });
    return merge_kernel_parts(parts, first);
  }

  // Each part fills the slots of its rowids (nsys numbers rows densely), then the rows close
  // up. The threads take the parts (kernel_part_count) as they come free, each with a
  // connection and statement of its own: the calls' reader and reserve()'s counts share the
  // cores, so equal parts do not end together. False, with the launches as they were, unless
  // the parts read every row of that one scan of the table in its order without a bad one
  // (rows_of_one_scan).
  bool read_kernel_ranges(const std::string& sql, std::vector<KernelPart>& parts, std::size_t first) {
    auto& launches = ctx_.profile.launches;
    const std::int64_t base = parts.front().first_rowid;
    const auto span = static_cast<std::size_t>(parts.back().end_rowid - base);
    const unsigned threads = reader_threads(ctx_, file_bytes_);
    const std::size_t faulted = first == first_launch_ ? std::min(faulted_launches_, span) : 0;
    if (launches.capacity() >= first + span && faulted < span)  // reserved (reserve()): the pages are new
      prefault_in_parallel(launches.data() + first + faulted, (span - faulted) * sizeof(model::Launch), threads);
    if (launches.capacity() < first + span) wait_for_kernel_pages();  // the buffer moves
    launches.reserve(first + span);
    auto slot = [&](const KernelPart& part) { return first + static_cast<std::size_t>(part.first_rowid - base); };
    PartSlots slots{launches.data(), launches.size()};
    std::atomic<std::size_t> next_part{0};
    run_parallel(std::size_t{threads} + 1, [&](std::size_t t) {
      if (t < threads) return read_parts_on_own_connection(sql, parts, next_part, slot, slots);
      const CpuTally::Charge charge(tally(cpu_.launch_slots));
      for (const KernelPart& part : parts) {  // a part's slots at a time, as resize makes them
        if (kernel_pages_) kernel_pages_->wait_until((slot(part) + part.span() - first_launch_) * sizeof(model::Launch));
        launches.resize(slot(part) + part.span());
        slots.made.store(launches.size(), std::memory_order_release);
        slots.made.notify_all();
      }
    });
    free_threads_for_calls();
    wait_for_kernel_pages();  // beyond the parts' slots, before anything else is written there
    std::optional<std::uint64_t> scanned;
    const std::int64_t waited_ns = wall_ns_of([&] { scanned = kernel_rows_count_.rows_if_begun(); });
    if (StepTimes* times = ctx_.step_times()) {
      times->add("row count, waited for", waited_ns);
      times->add("the parts, on " + std::to_string(threads) + " threads", cpu_.kernel_parts);
      times->add("launch slots made (beside)", cpu_.launch_slots);
      times->add("launch pages faulted in (beside)", cpu_.kernel_pages);
      times->add("kernel rows counted (beside)", cpu_.kernel_rows_count);
    }
    std::uint64_t rows = 0;
    bool whole = scanned.has_value();  // every part read to its end, in order
    for (const KernelPart& part : parts) {
      rows += part.rows;
      whole = whole && !part.out_of_order && !part.bad_row && !part.sqlite_error;
    }
    if (!whole || rows != *scanned) {  // damage or a bad row: one scan tells what one thread sees
      launches.resize(first);
      return false;
    }
    auto to = launches.begin() + static_cast<std::ptrdiff_t>(first);
    for (const KernelPart& part : parts) {
      const auto from = launches.begin() + static_cast<std::ptrdiff_t>(slot(part)), end = from + static_cast<std::ptrdiff_t>(part.rows);
      to = from == to ? end : std::move(from, end, to);  // no self-moves
    }
    launches.erase(to, launches.end());
    return true;
  }

  std::vector<KernelPart> plan_kernel_parts() {
    std::vector<KernelPart> parts(1);
    const unsigned threads = reader_threads(ctx_, file_bytes_);
    if (threads < 2) return parts;  // one scan
    const std::uint64_t count = kernel_part_count(threads, schema_.row_estimate(kKernels, file_bytes_));
    auto ranges = schema_.rowid_ranges(kKernels, count, file_bytes_, sizeof(model::Launch));
    if (ranges.empty()) return parts;
    parts.assign(ranges.size(), KernelPart{});
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      std::tie(parts[i].first_rowid, parts[i].end_rowid) = ranges[i];
    }
    return parts;
  }

  // The launches' slots as the parts read into them: made a part's at a time on a thread of
  // their own while the parts read into those made (on one thread before any part began,
  // making a million took 14 ms of the GPU machine's read). The parts reach them only through
  // `data`, taken before (the room is reserved: resize does not move it), once `made` says
  // theirs are made.
  struct PartSlots {
    model::Launch* data;
    std::atomic<std::size_t> made;  // launches [0, made) constructed

    model::Launch* wait_for(std::size_t at, std::size_t count) {
      for (std::size_t m; (m = made.load(std::memory_order_acquire)) < at + count;) made.wait(m, std::memory_order_acquire);
      return data + at;
    }
  };

  // Reads the parts `next` hands out until none is left, on one connection.
  template <class SlotOf>
  void read_parts_on_own_connection(const std::string& sql, std::vector<KernelPart>& parts,
                                    std::atomic<std::size_t>& next, const SlotOf& slot_of, PartSlots& made) {
    const CpuTally::Charge charge(tally(cpu_.kernel_parts));
    auto db = source_.open_for_a_scan();
    auto stmt = db ? db->prepare(sql) : Result<SqliteStatement>(db.error());
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < parts.size();) {
      KernelPart& part = parts[i];
      if (!stmt) {
        part.sqlite_error = stmt.error().message;
        continue;
      }
      stmt->reset();
      stmt->bind(1, part.first_rowid);
      model::Launch* slots = made.wait_for(slot_of(part), part.span());
      std::size_t at = 0;
      read_kernel_part(*stmt, ctx_.input_index, true, part, [&](model::Launch&& l) { slots[at++] = std::move(l); });
    }
    threads_freed_.handover->release_one();  // the calls' read takes this CPU: the last parts end apart
  }

  // The NVTX ranges' and the calls' read, begun before the kernels', waited for; then the
  // kernels merged.
  Status merge_kernel_parts(std::vector<KernelPart>& parts, std::size_t first) {
    step("NVTX ranges and CUDA API calls, the rest", [&] { calls(); });
    if (StepTimes* times = ctx_.step_times(); times && side_) {
      times->add("NVTX ranges (beside)", cpu_.nvtx);
      times->add("CUDA API calls (beside)", cpu_.calls);
      times->add("CUDA API calls counted (beside)", cpu_.calls_count);
    }
    if (!nvtx_status_) return nvtx_error_first(nvtx_status_);
    trace_end_ = std::max(trace_end_, nvtx_->latest_ns());
    return step("kernels merged in rowid order", [&] { return merge_kernel_parts_in_order(parts, first); });
  }

  // What a part's launches (launches[at, at + rows)) become in the profile: its names,
  // processes and launch configurations as the profile's.
  struct PartMerge {
    const KernelPart* part;
    std::size_t at, rows;
    std::vector<model::NameId> names;
    std::vector<std::uint32_t> processes;
    std::vector<model::ConfigId> configs;
  };

  // Names, processes and call keys of the parts' launches (from launches[first] on), in rowid
  // order; the first error in rowid order ends the table, as in one scan. The parts' tables are
  // interned in order first (a few entries each), then every launch is resolved on every
  // thread (resolve_launches), then attributed in order.
  Status merge_kernel_parts_in_order(std::vector<KernelPart>& parts, std::size_t first) {
    auto& launches = ctx_.profile.launches;
    std::vector<PartMerge> merges;
    std::optional<Error> error;
    std::uint64_t rows_before = 0;
    std::size_t at = first;
    for (const KernelPart& part : parts) {
      PartMerge& merge = merges.emplace_back(PartMerge{&part, at, part.rows, {}, {}, {}});
      if (part.bad_row)
        error = row_error(kKernels, rows_before + part.bad_row->first, part.bad_row->second);
      for (std::size_t n = 0; n < part.names.size(); ++n) {
        auto name = kernel_name(part.names[n]);
        if (name) {
          merge.names.push_back(*name);
        } else {  // a name is checked before the dimensions of its row
          merge.rows = part.name_first_row[n] - 1;
          error = row_error(kKernels, rows_before + part.name_first_row[n],
                            "no kernel name in StringIds for its name ids");
          break;
        }
      }
      for (std::int64_t pid : part.pids) merge.processes.push_back(process_index(pid));
      for (const auto& config : part.configs) merge.configs.push_back(ctx_.profile.intern_config(config));
      at += merge.rows;
      rows_before += part.rows + (part.bad_row ? 1 : 0);
      trace_end_ = std::max(trace_end_, part.trace_end);
      if (!error && part.sqlite_error)
        error = schema_.unreadable("table " + std::string(kKernels) + ": " + *part.sqlite_error);
      if (error) break;
    }
    for (const Attribution& a : resolve_launches(merges, first, at)) add_devices_and_unmatched(a);
    if (error) {
      launches.resize(at);
      return *error;
    }
    if (at == first) return ctx_.error(0, "table " + std::string(kKernels) + " holds no kernels");
    return ok_status();
  }

  // The stretches of a pass over `rows` launches: one for each ReadOptions::min_part_bytes of
  // them (a megabyte: ~12,000 launches), taken as threads come free (stretches_for_threads,
  // in_launch_chunks): with one a thread, the 8 M export's passes at 16 threads ended on 3 CPUs
  // for 20 ms.
  std::size_t launch_chunks(std::size_t rows) const {
    const std::size_t part_bytes = ctx_.options ? std::max<std::size_t>(1, ctx_.options->min_part_bytes) : ReadOptions().min_part_bytes;
    return stretches_for_threads(rows * sizeof(model::Launch), part_bytes, reader_threads(ctx_, file_bytes_));
  }
  void in_launch_chunks(std::size_t rows, std::size_t chunks,
                        const std::function<void(std::size_t chunk, std::size_t begin, std::size_t end)>& work) const {
    run_in_chunks_on(rows, chunks, reader_threads(ctx_, file_bytes_), work);
  }

  // Gives launches[first, end) the profile's names, configurations and processes for their
  // part's own, and attributes each to its call, on every thread with a cursor each: a
  // launch's call depends only on its process and correlation id, and the lookups were most
  // of the merge, serial after the parallel read. Each stretch's sets go into the stage
  // projection as the stretch ends, one stretch at a time, and are freed on its thread (added
  // one after the other once all were done, they and their frees were ~10 ms on one CPU at
  // 8 M launches); its devices and kernels without a call are returned, one attribution a
  // stretch, in order.
  std::vector<Attribution> resolve_launches(const std::vector<PartMerge>& merges, std::size_t first, std::size_t end) {
    auto& launches = ctx_.profile.launches;
    const std::size_t rows = end - first;
    const ApiCalls& api = calls();
    StageProjection& projected = projection();  // made before the threads: it takes the calls' sets
    std::mutex projecting;
    const std::size_t chunks = launch_chunks(rows);
    std::vector<Attribution> attributions(chunks);
    in_launch_chunks(rows, chunks, [&](std::size_t k, std::size_t from, std::size_t to) {
      ApiCalls::Cursor cursor;
      std::size_t i = first + from;
      const std::size_t stop = first + to;
      if (i == stop) return;
      // The last part beginning at or before i holds it (parts of no rows are passed over).
      auto merge = std::prev(std::upper_bound(merges.begin(), merges.end(), i,
                                              [](std::size_t row, const PartMerge& m) { return row < m.at; }));
      for (; i < stop; ++i) {
        while (i >= merge->at + merge->rows) ++merge;
        model::Launch& l = launches[i];
        l.name = merge->names[l.name];
        l.config = merge->configs[l.config];
        std::optional<std::uint32_t> call;
        if (l.process > 0) {
          call = api.find(merge->part->pids[l.process - 1], l.id, cursor);
          l.process = merge->processes[l.process - 1];
        }
        attribute(l, call, attributions[k]);
      }
      Attribution& a = attributions[k];
      {
        const std::lock_guard lock(projecting);
        add_to_projection(projected, a);
      }
      a.sets = {};
      a.last = {0, nullptr};
    });
    return attributions;
  }

  // The demangled name, else the short one, else the mangled one (as nsys's reports fall
  // back); the first name found for a demangled id stands for every later use of the id.
  std::optional<model::NameId> kernel_name(const NameIds& ids) {
    if (ids.demangled) {
      if (auto it = name_of_demangled_.find(*ids.demangled); it != name_of_demangled_.end())
        return it->second;
    }
    for (const auto& id : {ids.demangled, ids.short_name, ids.mangled}) {
      if (!id) continue;
      const auto& text = strings_.get(*id);
      if (!text || text->empty()) continue;
      model::NameId name = ctx_.profile.names.intern(*text);
      if (ids.demangled) name_of_demangled_.emplace(*ids.demangled, name);
      return name;
    }
    return std::nullopt;
  }

  Status read_memcpys() {
    static constexpr std::array<std::string_view, 2> kExtraColumns = {"bytes", "copyKind"};
    if (!schema_.has(kMemcpy)) return ok_status();
    if (auto s = read_memcpy_labels(); !s) return s;
    return read_memory_ops(kMemcpy, kExtraColumns, model::LaunchKind::kMemcpy);
  }

  Status read_memsets() {
    static constexpr std::array<std::string_view, 1> kExtraColumns = {"bytes"};
    if (!schema_.has(kMemset)) return ok_status();
    return read_memory_ops(kMemset, kExtraColumns, model::LaunchKind::kMemset);
  }

  Status read_memcpy_labels() {
    static constexpr std::array kColumns = {Column{"id", true}, Column{"label", true}};
    for (std::size_t i = 0; i < kMemcpyKindLabels.size(); ++i) {
      memcpy_labels_[static_cast<std::int64_t>(i)] = std::string(kMemcpyKindLabels[i]);
    }
    if (!schema_.has("ENUM_CUDA_MEMCPY_OPER")) return ok_status();
    auto stmt = schema_.select("ENUM_CUDA_MEMCPY_OPER", kColumns);
    if (!stmt) return stmt.error();
    memcpy_labels_.clear();
    while (stmt->step()) memcpy_labels_[stmt->int64(0)] = std::string(stmt->text(1));
    return schema_.finished(*stmt, "ENUM_CUDA_MEMCPY_OPER");
  }

  // nsys's names for memory operations: "[CUDA memcpy Host-to-Device]", "[CUDA memset]".
  model::NameId memory_op_name(model::LaunchKind kind, std::optional<std::int64_t> copy_kind) {
    if (kind == model::LaunchKind::kMemset) return ctx_.profile.names.intern(kMemsetLaunchName);
    auto it = copy_kind ? memcpy_labels_.find(*copy_kind) : memcpy_labels_.end();
    std::string label = it != memcpy_labels_.end() ? it->second
                        : copy_kind                ? "kind " + std::to_string(*copy_kind)
                                                   : "Unknown";
    return ctx_.profile.names.intern(memcpy_launch_name(label));
  }

  Status read_memory_ops(std::string_view table, std::span<const std::string_view> extra,
                         model::LaunchKind kind) {
    auto cols = op_columns(extra);
    auto stmt = schema_.select(table, cols);
    if (!stmt) return stmt.error();
    std::uint64_t row = 0;
    IntRow values;
    while (stmt->step()) {
      values.read(*stmt, static_cast<int>(cols.size()));
      model::Launch l;
      l.kind = kind;
      if (auto s = read_op(*stmt, values, table, ++row, l); !s) return s;
      if (auto bytes = values.opt(kExtra); bytes && *bytes >= 0) l.bytes = *bytes;
      l.name = memory_op_name(
          kind, kind == model::LaunchKind::kMemcpy ? values.opt(kExtra + 1) : std::nullopt);
      ctx_.profile.launches.push_back(std::move(l));
    }
    return schema_.finished(*stmt, table);
  }

  // ---- CUDA API calls and NVTX ranges -------------------------------------------------------

  // Each attributed launch's place becomes its stage. The projection and the NVTX ranges are
  // then done with: they are freed beside that pass, not in the reader's end (their sets and
  // ranges, a few hundred thousand small blocks at 8 M launches, took 8-12 ms of one thread).
  void attribute_to_stages() {
    // Made where no launch was attributed too: it names the stage outside every range, as always.
    const std::vector<model::StageId> stage_of_set = projection().finish(ctx_.profile, reader_threads(ctx_, file_bytes_));
    warn_about_ranges(unmatched_kernels_);
    const auto& places = calls().places();
    auto& launches = ctx_.profile.launches;
    const std::size_t first = first_launch_, rows = launches.size() - first, chunks = launch_chunks(rows);
    run_side_by_side(
        [&] {
          projection_.reset();
          nvtx_.reset();
        },
        [&] {
          in_launch_chunks(rows, chunks, [&](std::size_t, std::size_t begin, std::size_t end) {  // on every thread
            for (std::size_t i = first + begin; i < first + end; ++i) {
              if (launches[i].stage > 0) launches[i].stage = stage_of_set[places[launches[i].stage - 1].set];
            }
          });
        });
  }

  void warn_about_ranges(std::size_t unmatched_kernels) {
    nvtx_->warn(ctx_, trace_end_);
    if (nvtx_->ranges().empty()) return;
    if (!schema_.has(kRuntime)) {
      ctx_.warn(
          0, "no table " + std::string(kRuntime) + ": kernels cannot be attributed to NVTX ranges");
    } else if (unmatched_kernels > 0) {
      ctx_.warn(0, std::to_string(unmatched_kernels) +
                       " kernels have no CUDA API call with their "
                       "correlation id in " +
                       std::string(kRuntime) + ": they count outside every NVTX range");
    }
  }

  SqliteDb db_;
  DbSource source_;
  std::uint64_t file_bytes_;
  ReadContext& ctx_;
  Schema schema_;
  Strings strings_;
  // What the work beside the kernel rows cost on its threads (--verbose), charged where
  // tally() gives them: before the members whose threads charge them.
  struct {
    CpuTally kernel_parts, launch_slots, kernel_pages, kernel_rows_count, nvtx, calls, calls_count;
  } cpu_;
  CpuTally* tally(CpuTally& t) { return ctx_.step_times() ? &t : nullptr; }
  // A connection for the NVTX ranges and the calls' SQL on the thread that reads them.
  struct SideConnection {
    SideConnection(SqliteDb connection, ReadContext& ctx) : db(std::move(connection)), schema(db, ctx) {}
    SqliteDb db;
    Schema schema;
    Strings strings;
  };
  std::unique_ptr<SideConnection> side_;
  std::optional<NvtxRanges> nvtx_;
  Status nvtx_status_ = ok_status();  // set by api_calls_'s task: read once it is waited for
  // The calls and the stage projection made of their sets of ranges.
  struct CallsRead {
    ApiCalls calls;
    std::optional<StageProjection> projection;
  };
  std::future<CallsRead> api_calls_;  // after source_, side_ and nvtx_, which its task uses
  // The kernel rows' threads, handed to the calls' read as each is free and all once the rows
  // are read (free_threads_for_calls); destroyed before api_calls_, whose task may wait for
  // them: a read that ends early hands them all over, which ends the wait.
  struct HandedOverAtTheEnd {
    std::shared_ptr<ThreadHandover> handover = std::make_shared<ThreadHandover>();
    HandedOverAtTheEnd() = default;
    HandedOverAtTheEnd(const HandedOverAtTheEnd&) = delete;
    HandedOverAtTheEnd& operator=(const HandedOverAtTheEnd&) = delete;
    ~HandedOverAtTheEnd() { handover->release_all(); }
  } threads_freed_;
  std::optional<ApiCalls> calls_;
  std::optional<StageProjection> projection_;
  Attribution memory_ops_;  // read_op's, for read_memory_ops to add
  std::size_t first_launch_ = 0;
  std::size_t faulted_launches_ = 0;        // reserve()'s: launches from first_launch_ on
  std::optional<PrefaultInOrder> kernel_pages_;  // their pages, faulted in in order
  std::vector<KernelPart> kernel_parts_;  // reserve()'s plan
  RowCount kernel_rows_count_;  // its count, with several parts
  RowCount calls_count_;        // the calls' (begin_api_calls_count)
  std::size_t unmatched_kernels_ = 0;
  std::map<std::int64_t, model::Device> gpus_;  // TARGET_INFO_GPU id -> device
  std::vector<std::int32_t> devices_used_;
  std::unordered_map<std::int64_t, std::string> process_names_;  // globalPid -> name
  std::unordered_map<std::int64_t, std::uint32_t>
      process_index_;  // globalPid -> Profile::processes
  std::unordered_map<std::int64_t, model::NameId> name_of_demangled_;
  std::map<std::int64_t, std::string> memcpy_labels_;
  std::int64_t trace_end_ = std::numeric_limits<std::int64_t>::min();
};

Status read_database(DbSource source, std::uint64_t file_bytes, ReadContext& ctx) {
  // The first connection scans too (the schema, the kernels on one thread, memory operations,
  // NVTX): a scan's small page cache, not SQLite's 2 MB default.
  auto db = source.open_for_a_scan();
  if (!db) return ctx.error(0, "cannot open the SQLite database: " + db.error().message);
  return NsysReader(std::move(*db), std::move(source), file_bytes, ctx).read();
}

Error truncated(std::uint64_t declared, std::uint64_t size, ReadContext& ctx) {
  return ctx.error(0, "the SQLite file is truncated: its header declares " +
                          std::to_string(declared) + " bytes, the file has " +
                          std::to_string(size));
}

}  // namespace

Status read_nsys_sqlite(std::string_view bytes, ReadContext& ctx) {
  if (auto declared = sqlite_declared_size_beyond(bytes, bytes.size())) {
    return truncated(*declared, bytes.size(), ctx);
  }
  return read_database(DbSource{bytes, {}}, bytes.size(), ctx);
}

Status read_nsys_sqlite_file(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx) {
  auto head = read_file_head(path, 100);
  if (!head) return head.error();
  if (auto declared = sqlite_declared_size_beyond(*head, file_bytes))
    return truncated(*declared, file_bytes, ctx);
  return read_database(DbSource{{}, path}, file_bytes, ctx);
}

}  // namespace kernlens::ingest
