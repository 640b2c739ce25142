// libkernlens_tracer.so: a CUPTI injection library. CUDA loads it into the user's program when
// CUDA_INJECTION64_PATH names it and calls InitializeInjection() at cuInit. It records every
// kernel, memcpy and memset with CUPTI's Activity API, and the CUDA calls that launched them
// (thread and time, for NVTX attribution) through CUPTI callbacks on the launch calls only.
// NVTX ranges come through the same library acting as NVTX's injection (nvtx_injection.cpp;
// NVTX_INJECTION64_PATH names this library: `kernlens profile` sets it, else the tracer does at
// cuInit). At exit it writes $KERNLENS_TRACE_DIR/kernlens-<pid>.kltrace (format/kltrace.h), and with
// KERNLENS_TRACE_CHROME=1 also kernlens-<pid>.trace.json.
//
// It never stops the program: a CUPTI error is reported once ("kernlens-tracer: ...") and
// tracing is switched off. Depends on CUPTI and the C++ standard library only.
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <string_view>
#include <unordered_set>

#include "kernlens/tracer/chrome_trace.h"
#include "kernlens/tracer/session.h"

namespace kernlens::tracer {
namespace {

// CUPTI hands out buffers of this size; records are tens to hundreds of bytes, so a buffer
// holds tens of thousands of them and the completion callback runs rarely.
constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kBufferAlign = 8;

// Reports a CUPTI failure once and switches tracing off; true when `r` is a success.
bool cupti_ok(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true)) {
    const char* text = nullptr;
    cuptiGetResultString(r, &text);
    std::fprintf(stderr, "kernlens-tracer: %s failed: %s; tracing is off for this process\n", what,
                 text ? text : "unknown CUPTI error");
  }
  session().tracing = false;
  return false;
}

// ---- activity records ----------------------------------------------------------------------

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_num_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_num_records = 0;  // as many as fit
}

// CUPTI appends fields to its record structs from one version to the next, so the fields read
// here (all from the start of the structs) are where this header says whichever CUPTI of the
// same major version runs.
void add_kernel(Session& s, const CUpti_ActivityKernel10& k) {
  tf::KernelRecord r;
  // CUPTI shares one name string among the records of a kernel: look the pointer up first, and
  // check the text (a module unloaded may leave its memory to another name).
  const char* name = k.name ? k.name : "<unknown kernel>";
  auto [it, is_new] = s.kernel_names.try_emplace(name, 0);
  if (is_new || s.data.strings[it->second] != name) it->second = s.strings.intern(name);
  r.name = it->second;
  r.device = k.deviceId, r.context = k.contextId, r.stream = k.streamId, r.correlation = k.correlationId;
  r.grid = {static_cast<std::uint32_t>(k.gridX), static_cast<std::uint32_t>(k.gridY), static_cast<std::uint32_t>(k.gridZ)};
  r.block = {static_cast<std::uint32_t>(k.blockX), static_cast<std::uint32_t>(k.blockY),
             static_cast<std::uint32_t>(k.blockZ)};
  r.registers_per_thread = k.registersPerThread;
  r.static_shared_bytes = k.staticSharedMemory, r.dynamic_shared_bytes = k.dynamicSharedMemory;
  r.start_ns = k.start, r.end_ns = k.end;
  s.data.kernels.push_back(r);
}

void add_memcpy(Session& s, const CUpti_ActivityMemcpy6& m) {
  tf::MemOpRecord r;
  r.kind = tf::MemOpKind::kMemcpy;
  r.copy_kind = m.copyKind;
  r.device = m.deviceId, r.context = m.contextId, r.stream = m.streamId, r.correlation = m.correlationId;
  r.bytes = m.bytes, r.start_ns = m.start, r.end_ns = m.end;
  s.data.memops.push_back(r);
}

void add_memset(Session& s, const CUpti_ActivityMemset4& m) {
  tf::MemOpRecord r;
  r.kind = tf::MemOpKind::kMemset;
  r.device = m.deviceId, r.context = m.contextId, r.stream = m.streamId, r.correlation = m.correlationId;
  r.bytes = m.bytes, r.start_ns = m.start, r.end_ns = m.end;
  s.data.memops.push_back(r);
}

void add_device(Session& s, const CUpti_ActivityDevice5& d) {
  tf::DeviceRecord r;
  r.ordinal = d.id;
  r.name = s.strings.intern(d.name ? d.name : "");
  r.cc_major = d.computeCapabilityMajor, r.cc_minor = d.computeCapabilityMinor;
  r.sm_count = d.numMultiprocessors;
  r.max_threads_per_sm = d.maxWarpsPerMultiprocessor * d.numThreadsPerWarp;
  r.max_shared_memory_per_sm_bytes = d.maxSharedMemoryPerMultiprocessor;
  r.l2_cache_bytes = d.l2CacheSize;
  r.core_clock_khz = d.coreClockRate;
  r.global_memory_bytes = d.globalMemorySize;
  s.data.devices.push_back(r);
}

void add_record(Session& s, const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      add_kernel(s, *reinterpret_cast<const CUpti_ActivityKernel10*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: add_memcpy(s, *reinterpret_cast<const CUpti_ActivityMemcpy6*>(record)); break;
    case CUPTI_ACTIVITY_KIND_MEMSET: add_memset(s, *reinterpret_cast<const CUpti_ActivityMemset4*>(record)); break;
    case CUPTI_ACTIVITY_KIND_DEVICE: add_device(s, *reinterpret_cast<const CUpti_ActivityDevice5*>(record)); break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& a = *reinterpret_cast<const CUpti_ActivityAPI*>(record);
      s.data.api_calls.push_back(tf::ApiCallRecord{a.correlationId, a.threadId, a.start, a.end});
      break;
    }
    default: break;
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  Session& s = session();
  {
    std::lock_guard lock(s.mutex);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) add_record(s, record);
  }
  std::free(buffer);
}

// GPU activity kinds: the work itself. DEVICE records, enabled apart, come at context creation.
constexpr CUpti_ActivityKind kGpuWorkKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                                CUPTI_ACTIVITY_KIND_MEMSET};

// ---- launch calls ----------------------------------------------------------------------------

// The launch calls serve only to place GPU work inside NVTX ranges (its thread, its CPU time),
// so only the calls that start GPU work are watched: launches, copies, sets, graph launches.
bool launches_gpu_work(const char* api_name) {
  if (!api_name) return false;
  for (const char* word : {"Launch", "Memcpy", "Memset", "memcpy", "memset"}) {
    if (std::strstr(api_name, word)) return true;
  }
  return false;
}

std::vector<CUpti_CallbackId> launch_apis(CUpti_CallbackDomain domain, CUpti_CallbackId size) {
  std::vector<CUpti_CallbackId> ids;
  for (CUpti_CallbackId cbid = 1; cbid < size; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && launches_gpu_work(name)) ids.push_back(cbid);
  }
  return ids;
}

LaunchLog& this_thread_log() {
  thread_local LaunchLog* log = [] {
    Session& s = session();
    std::lock_guard lock(s.mutex);
    return s.launch_logs.emplace_back(std::make_unique<LaunchLog>()).get();
  }();
  return *log;
}

// How GPU work and its launch calls are collected, and whether they are now. Launch calls come
// from CUPTI callbacks (a function call per launch) or, when another tool holds CUPTI's one
// callback subscriber or KERNLENS_TRACE_LAUNCH_CALLS=activity, from API activity records (two
// timestamps and a record per call, and CUPTI then intercepts every API call).
// KERNLENS_TRACE_CAPTURE=cudaProfilerApi collects only between cudaProfilerStart and
// cudaProfilerStop, as nsys's --capture-range=cudaProfilerApi; it needs the callbacks.
struct Collection {
  CUpti_SubscriberHandle subscriber = nullptr;  // null: API activity records
  std::vector<CUpti_CallbackId> runtime_launches, driver_launches;
  bool capture_range = false;
  std::mutex mutex;  // set_collecting runs on whichever thread calls cudaProfilerStart/Stop
  bool collecting = false;
};

Collection& collection() {
  static Collection* c = new Collection;
  return *c;
}

void set_collecting(Collection& c, bool on) {
  std::lock_guard lock(c.mutex);
  if (c.collecting == on) return;
  c.collecting = on;
  for (CUpti_ActivityKind kind : kGpuWorkKinds) on ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind);
  for (CUpti_CallbackId cbid : c.runtime_launches) {
    c.subscriber ? cuptiEnableCallback(on, c.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid)
                 : cuptiActivityEnableRuntimeApi(cbid, on);
  }
  for (CUpti_CallbackId cbid : c.driver_launches) {
    c.subscriber ? cuptiEnableCallback(on, c.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid)
                 : cuptiActivityEnableDriverApi(cbid, on);
  }
}

// The calls that open and close the capture range. Both levels are watched: a program may call
// either (the runtime's calls the driver's; collecting twice is harmless).
struct ProfilerCall {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  bool starts;
};
constexpr ProfilerCall kProfilerCalls[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, true},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, true},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, false}};

const ProfilerCall* profiler_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  for (const ProfilerCall& p : kProfilerCalls) {
    if (p.domain == domain && p.cbid == cbid) return &p;
  }
  return nullptr;
}

// A runtime launch calls a driver launch with the same correlation id: the runtime call alone
// is logged. Driver launches outside one (Triton, cuBLASLt's) are logged themselves.
thread_local std::uint32_t runtime_launch_correlation = 0;

void CUPTIAPI on_api_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  const auto& call = *static_cast<const CUpti_CallbackData*>(data);
  const bool enter = call.callbackSite == CUPTI_API_ENTER;
  if (const ProfilerCall* p = profiler_call(domain, cbid)) {
    if (!enter) set_collecting(collection(), p->starts);
    return;
  }
  if (!enter) return;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    runtime_launch_correlation = call.correlationId;
  } else if (call.correlationId == runtime_launch_correlation) {
    return;
  }
  if (!session().recording) return;
  const std::uint64_t t = now_ns();
  LaunchLog& log = this_thread_log();
  std::lock_guard lock(log.mutex);
  log.calls.push_back(tf::ApiCallRecord{call.correlationId, this_thread_id(), t, t});
}

bool env_is(const char* name, std::string_view value) {
  const char* v = std::getenv(name);
  return v && std::string_view(v) == value;
}

void start_collection() {
  Collection& c = collection();
  c.runtime_launches = launch_apis(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
  c.driver_launches = launch_apis(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
  const bool want_activity = env_is("KERNLENS_TRACE_LAUNCH_CALLS", "activity");
  if (want_activity || cuptiSubscribe(&c.subscriber, on_api_call, nullptr) != CUPTI_SUCCESS) {
    c.subscriber = nullptr;
    if (!want_activity) {
      std::fprintf(stderr, "kernlens-tracer: another tool holds CUPTI's callbacks; launch calls are traced with "
                           "API records, which cost more time per launch\n");
    }
  }
  c.capture_range = env_is("KERNLENS_TRACE_CAPTURE", "cudaProfilerApi");
  if (c.capture_range && !c.subscriber) {
    std::fprintf(stderr, "kernlens-tracer: KERNLENS_TRACE_CAPTURE=cudaProfilerApi needs CUPTI's callbacks; "
                         "collecting from the start\n");
    c.capture_range = false;
  }
  if (c.capture_range) {
    for (const ProfilerCall& p : kProfilerCalls) cuptiEnableCallback(1, c.subscriber, p.domain, p.cbid);
  }
  set_collecting(c, !c.capture_range);
}

// ---- output ----------------------------------------------------------------------------------

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text) c = c == '\0' ? ' ' : c;
  return text;
}

// Only the calls whose correlation id a kernel, copy or set has: the rest place nothing.
void keep_launching_calls(tf::TraceData& data) {
  std::unordered_set<std::uint32_t> used;
  for (const auto& k : data.kernels) used.insert(k.correlation);
  for (const auto& m : data.memops) used.insert(m.correlation);
  std::erase_if(data.api_calls, [&](const tf::ApiCallRecord& a) { return !used.contains(a.correlation); });
}

// Ranges still open at exit are written with an open end; the reader ends them with the trace.
void close_open_ranges(Session& s) {
  for (auto& [key, stack] : s.stacks) {
    for (const auto& open : stack) {
      s.data.ranges.push_back(tf::RangeRecord{open.domain, open.name, tf::RangeKind::kPushPop, open.thread,
                                              open.start_ns, tf::kOpenEnd});
    }
    stack.clear();
  }
  for (auto& [id, range] : s.started) s.data.ranges.push_back(range);
  s.started.clear();
}

bool write_file(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "kernlens-tracer: cannot write %s\n", tmp.c_str());
      return false;
    }
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

std::string output_stem() {
  const char* dir = std::getenv("KERNLENS_TRACE_DIR");
  std::string stem = dir && *dir ? std::string(dir) + "/" : std::string();
  return stem + "kernlens-" + std::to_string(getpid());
}

// The launch calls of every thread, moved into the trace (s.mutex held).
void collect_launch_calls(Session& s) {
  for (auto& log : s.launch_logs) {
    std::lock_guard lock(log->mutex);
    s.data.api_calls.insert(s.data.api_calls.end(), log->calls.begin(), log->calls.end());
    log->calls.clear();
  }
}

// Takes the session's lock; from a signal handler only a bounded number of tries, since the
// interrupted code may hold it (then the trace is lost rather than the program hung).
bool lock_session(Session& s, bool from_signal) {
  if (!from_signal) {
    s.mutex.lock();
    return true;
  }
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (s.mutex.try_lock()) return true;
    usleep(1000);
  }
  std::fprintf(stderr, "kernlens-tracer: the trace could not be written (the signal came inside the tracer)\n");
  return false;
}

// Flushes CUPTI and writes the files, once per process; nothing when it saw no GPU work and no
// NVTX range.
void write_trace(bool from_signal) {
  Session& s = session();
  if (s.written.exchange(true)) return;
  if (s.tracing) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (!lock_session(s, from_signal)) return;
  std::lock_guard lock(s.mutex, std::adopt_lock);
  s.recording = false;
  close_open_ranges(s);
  collect_launch_calls(s);
  keep_launching_calls(s.data);
  if (s.data.kernels.empty() && s.data.memops.empty() && s.data.ranges.empty()) return;
  s.data.process.pid = static_cast<std::uint32_t>(getpid());
  s.data.process.parent_pid = static_cast<std::uint32_t>(getppid());
  s.data.process.trace_end_ns = now_ns();
  s.data.process.command_line = s.strings.intern(command_line());
  const std::string stem = output_stem();
  if (!write_file(stem + ".kltrace", tf::encode(s.data))) return;
  const char* chrome = std::getenv("KERNLENS_TRACE_CHROME");
  if (chrome && std::string_view(chrome) == "1") write_file(stem + ".trace.json", tf::chrome_trace_json(s.data));
}

void write_trace_at_exit() { write_trace(false); }

// ---- exits -------------------------------------------------------------------------------------

// Best effort: the handler writes the trace, then the signal's default action ends the process
// as it would have without the tracer.
void on_signal(int sig) {
  write_trace(true);
  signal(sig, SIG_DFL);
  raise(sig);
}

// Only where the program keeps the default action: Python and most servers install their own
// SIGINT handler and exit through atexit anyway.
void install_signal_handlers() {
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) signal(sig, on_signal);
  }
}

std::terminate_handler previous_terminate = nullptr;
void on_terminate() {
  write_trace(false);
  if (previous_terminate) previous_terminate();
  std::abort();
}

// A child forked without exec shares the parent's records; it cannot use CUDA, and writing
// them under its own pid would count the parent's kernels twice.
void in_forked_child() {
  Session& s = session();
  s.tracing = false;
  s.recording = false;
  s.written = true;
}

bool same_file(const char* a, const char* b) {
  struct stat sa {}, sb {};
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// NVTX finds this library through NVTX_INJECTION64_PATH, read at each library's first NVTX
// call. `kernlens profile` sets it before the program starts; a program started with only
// CUDA_INJECTION64_PATH gets it here, at cuInit, in time for ranges opened after that.
void point_nvtx_at_this_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&write_trace_at_exit), &info) == 0 || !info.dli_fname) return;
  const char* current = std::getenv("NVTX_INJECTION64_PATH");
  if (!current || !*current) {
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 1);
  } else if (!same_file(current, info.dli_fname)) {
    std::fprintf(stderr, "kernlens-tracer: NVTX_INJECTION64_PATH names %s, not this tracer (%s): NVTX ranges go "
                         "there and are not recorded\n", current, info.dli_fname);
  }
}

std::uint64_t CUPTIAPI cupti_timestamp() { return now_ns(); }

bool start_tracing(Session& s) {
  // One clock for CUPTI's records and the tracer's own NVTX and launch times, whatever clock
  // CUPTI would pick on this platform.
  cupti_ok(cuptiActivityRegisterTimestampCallback(cupti_timestamp), "cuptiActivityRegisterTimestampCallback");
  // Thread ids as the NVTX side records them (gettid, as nsys), not CUPTI's default
  // pthread_self(): API records, when they are used, must name the same threads.
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (!cupti_ok(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks") ||
      !cupti_ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE), "cuptiActivityEnable")) {
    return false;
  }
  start_collection();
  std::uint32_t version = 0;
  cuptiGetVersion(&version);
  std::lock_guard lock(s.mutex);
  s.data.process.cupti_version = version;
  if (s.data.process.trace_start_ns == 0) s.data.process.trace_start_ns = now_ns();
  return true;
}

}  // namespace

// Both entry points (CUDA's and NVTX's) make sure the trace is written at exit.
void register_exit_writer() {
  static std::once_flag once;
  std::call_once(once, [] {
    Session& s = session();
    {
      std::lock_guard lock(s.mutex);
      if (s.data.process.trace_start_ns == 0) s.data.process.trace_start_ns = now_ns();
    }
    std::atexit(write_trace_at_exit);
    install_signal_handlers();
    previous_terminate = std::set_terminate(on_terminate);
    pthread_atfork(nullptr, nullptr, in_forked_child);
  });
}

}  // namespace kernlens::tracer

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace kernlens::tracer;
  static std::once_flag once;
  std::call_once(once, [] {
    Session& s = session();
    s.tracing = true;
    if (!start_tracing(s)) return;
    point_nvtx_at_this_library();
    register_exit_writer();
  });
  return 1;
}
