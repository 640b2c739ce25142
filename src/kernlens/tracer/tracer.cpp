// libkernlens_tracer.so: a CUPTI injection library. CUDA loads it into the user's program when
// CUDA_INJECTION64_PATH names it and calls InitializeInjection() at cuInit. It records every
// kernel, memcpy and memset with CUPTI's Activity API, the CUDA calls that launched them (for
// NVTX attribution), and NVTX push/pop and start/end ranges through CUPTI's NVTX callbacks
// (the program's NVTX must be pointed at CUPTI: NVTX_INJECTION64_PATH=<libcupti.so>; the
// tracer sets it when it is unset and NVTX was not used yet). At exit it writes
// $KERNLENS_TRACE_DIR/kernlens-<pid>.kltrace (format.h), and with KERNLENS_TRACE_CHROME=1 also
// kernlens-<pid>.trace.json.
//
// It never stops the program: a CUPTI error is reported once ("kernlens-tracer: ...") and
// tracing is switched off. Depends on CUPTI and the C++ standard library only.
#include <cupti.h>
#include <dlfcn.h>
#include <generated_nvtx_meta.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kernlens/tracer/chrome_trace.h"
#include "kernlens/tracer/format.h"

namespace {

namespace tf = kernlens::trace_format;

// CUPTI hands out buffers of this size; records are tens of bytes, so a buffer holds about
// 100k of them and the completion callback runs rarely.
constexpr std::size_t kBufferBytes = 8u << 20;
constexpr std::size_t kBufferAlign = 8;

struct OpenRange {
  std::uint32_t domain, name;
  std::uint64_t start_ns;
};

// Everything the tracer holds, behind one mutex. The application's threads take it only for
// NVTX events (a few per step, not per kernel); CUPTI's buffer thread takes it once per
// completed buffer.
struct Session {
  std::mutex mutex;
  tf::TraceData data;
  tf::StringInterner strings{data.strings};
  std::unordered_map<std::uint32_t, std::vector<OpenRange>> stacks;  // thread -> open push/pop ranges
  std::unordered_map<std::uint64_t, tf::RangeRecord> started;         // nvtxRangeId_t -> start/end range
  std::unordered_map<const void*, std::uint32_t> domains;             // nvtxDomainHandle_t -> string id
  std::unordered_map<const void*, std::uint32_t> registered;          // nvtxStringHandle_t -> string id
  std::uint64_t dropped_records = 0;
  std::atomic<bool> enabled{false};
  std::atomic<bool> written{false};
  CUpti_SubscriberHandle subscriber = nullptr;
};

Session& session() {
  static Session* s = new Session;  // never destroyed: atexit handlers and CUPTI threads use it
  return *s;
}

std::uint32_t this_thread_id() {
  thread_local const auto tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
  return tid;
}

std::uint64_t now_ns() {
  std::uint64_t ts = 0;
  cuptiGetTimestamp(&ts);
  return ts;
}

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
  session().enabled = false;
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
  r.name = s.strings.intern(k.name ? k.name : "<unknown kernel>");
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

// Activity kinds, in the order they are enabled. DEVICE first: its records come at context
// creation.
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                         CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

// API records serve only to place launches inside NVTX ranges: keep those of the calls that
// start GPU work (launches, copies, sets, graph launches), the rest would cost time for nothing.
bool launches_gpu_work(const char* api_name) {
  if (!api_name) return false;
  for (const char* word : {"Launch", "Memcpy", "Memset", "memcpy", "memset"}) {
    if (std::strstr(api_name, word)) return true;
  }
  return false;
}

void keep_only_launch_apis() {
  for (CUpti_CallbackId cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) != CUPTI_SUCCESS) continue;
    if (!launches_gpu_work(name)) cuptiActivityEnableRuntimeApi(cbid, 0);
  }
  for (CUpti_CallbackId cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) != CUPTI_SUCCESS) continue;
    if (!launches_gpu_work(name)) cuptiActivityEnableDriverApi(cbid, 0);
  }
}

// ---- NVTX ------------------------------------------------------------------------------------

std::uint32_t message_id(Session& s, const nvtxEventAttributes_t* attr) {
  if (!attr) return 0;
  switch (attr->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return attr->message.ascii ? s.strings.intern(attr->message.ascii) : 0;
    case NVTX_MESSAGE_TYPE_REGISTERED: {
      auto it = s.registered.find(attr->message.registered);
      return it == s.registered.end() ? s.strings.intern("<unregistered string>") : it->second;
    }
    default: return s.strings.intern("<non-ASCII NVTX message>");
  }
}

std::uint32_t domain_id(Session& s, const void* domain) {
  if (!domain) return 0;
  auto it = s.domains.find(domain);
  return it == s.domains.end() ? s.strings.intern("<unnamed domain>") : it->second;
}

void push(Session& s, const void* domain, std::uint32_t name) {
  s.stacks[this_thread_id()].push_back(OpenRange{domain_id(s, domain), name, now_ns()});
}

void pop(Session& s) {
  auto& stack = s.stacks[this_thread_id()];
  if (stack.empty()) return;  // a pop without a push: NVTX ignores it too
  const OpenRange open = stack.back();
  stack.pop_back();
  s.data.ranges.push_back(tf::RangeRecord{open.domain, open.name, tf::RangeKind::kPushPop, this_thread_id(),
                                          open.start_ns, now_ns()});
}

void start(Session& s, const void* domain, std::uint32_t name, const void* return_value) {
  if (!return_value) return;
  const auto id = *static_cast<const nvtxRangeId_t*>(return_value);
  s.started[id] = tf::RangeRecord{domain_id(s, domain), name, tf::RangeKind::kStartEnd, this_thread_id(), now_ns(),
                                  tf::kOpenEnd};
}

void end(Session& s, nvtxRangeId_t id) {
  auto it = s.started.find(id);
  if (it == s.started.end()) return;
  it->second.end_ns = now_ns();
  s.data.ranges.push_back(it->second);
  s.started.erase(it);
}

template <class Params>
const Params& params(const CUpti_NvtxData* d) {
  return *static_cast<const Params*>(d->functionParams);
}

void on_nvtx(Session& s, CUpti_CallbackId cbid, const CUpti_NvtxData* d) {
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA: push(s, nullptr, s.strings.intern(params<nvtxRangePushA_params>(d).message)); break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx: push(s, nullptr, message_id(s, params<nvtxRangePushEx_params>(d).eventAttrib)); break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto& p = params<nvtxDomainRangePushEx_params>(d);
      push(s, p.domain, message_id(s, p.core.eventAttrib));
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop: pop(s); break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      start(s, nullptr, s.strings.intern(params<nvtxRangeStartA_params>(d).message), d->functionReturnValue);
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      start(s, nullptr, message_id(s, params<nvtxRangeStartEx_params>(d).eventAttrib), d->functionReturnValue);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      const auto& p = params<nvtxDomainRangeStartEx_params>(d);
      start(s, p.domain, message_id(s, p.core.eventAttrib), d->functionReturnValue);
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeEnd: end(s, params<nvtxRangeEnd_params>(d).id); break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: end(s, params<nvtxDomainRangeEnd_params>(d).core.id); break;
    case CUPTI_CBID_NVTX_nvtxDomainCreateA:
      if (d->functionReturnValue) {
        s.domains[*static_cast<const nvtxDomainHandle_t*>(d->functionReturnValue)] =
            s.strings.intern(params<nvtxDomainCreateA_params>(d).name);
      }
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA:
      if (d->functionReturnValue) {
        s.registered[*static_cast<const nvtxStringHandle_t*>(d->functionReturnValue)] =
            s.strings.intern(params<nvtxDomainRegisterStringA_params>(d).string);
      }
      break;
    default: break;  // marks, categories, W (wide) variants: not stages
  }
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  Session& s = session();
  if (domain != CUPTI_CB_DOMAIN_NVTX || !s.enabled) return;
  std::lock_guard lock(s.mutex);
  on_nvtx(s, cbid, static_cast<const CUpti_NvtxData*>(data));
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
  for (auto& [thread, stack] : s.stacks) {
    for (const auto& open : stack) {
      s.data.ranges.push_back(tf::RangeRecord{open.domain, open.name, tf::RangeKind::kPushPop, thread, open.start_ns,
                                              tf::kOpenEnd});
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

// Flushes CUPTI and writes the files, once per process.
void write_trace() {
  Session& s = session();
  if (s.written.exchange(true) || !s.enabled) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(s.mutex);
  s.enabled = false;
  close_open_ranges(s);
  keep_launching_calls(s.data);
  s.data.process.trace_end_ns = now_ns();
  s.data.process.command_line = s.strings.intern(command_line());
  const std::string stem = output_stem();
  if (!write_file(stem + ".kltrace", tf::encode(s.data))) return;
  const char* chrome = std::getenv("KERNLENS_TRACE_CHROME");
  if (chrome && std::string_view(chrome) == "1") write_file(stem + ".trace.json", tf::chrome_trace_json(s.data));
}

// ---- exits -------------------------------------------------------------------------------------

// Best effort: the handler writes the trace (not async-signal-safe: it allocates and takes a
// lock, acceptable when the program is being ended anyway), then the signal's default action
// ends the process as it would have without the tracer.
void on_signal(int sig) {
  write_trace();
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
  write_trace();
  if (previous_terminate) previous_terminate();
  std::abort();
}

// A child forked without exec shares the parent's buffers; it cannot use CUDA, and writing
// them under its own pid would count the parent's kernels twice.
void in_forked_child() {
  Session& s = session();
  s.enabled = false;
  s.written = true;
}

// The program's NVTX calls reach CUPTI only when NVTX_INJECTION64_PATH names the CUPTI
// library (CUPTI documentation, "NVTX"). NVTX reads it at its first call, which in most
// programs comes after CUDA's initialisation: pointing it at the libcupti this library loaded
// then still works. `kernlens profile` sets it before the program starts, which always does.
void point_nvtx_at_cupti() {
  if (std::getenv("NVTX_INJECTION64_PATH")) return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiGetTimestamp), &info) != 0 && info.dli_fname) {
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
  }
}

bool start_tracing(Session& s) {
  if (!cupti_ok(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks"))
    return false;
  for (CUpti_ActivityKind kind : kKinds) {
    if (!cupti_ok(cuptiActivityEnable(kind), "cuptiActivityEnable")) return false;
  }
  keep_only_launch_apis();
  if (cuptiSubscribe(&s.subscriber, on_callback, nullptr) == CUPTI_SUCCESS) {
    cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_NVTX);
  } else {
    // Another CUPTI client (torch.profiler, Nsight) holds the one subscriber slot.
    std::fprintf(stderr, "kernlens-tracer: cannot subscribe to NVTX callbacks (another profiler?); kernels are "
                         "traced, NVTX ranges are not\n");
  }
  s.data.process.pid = static_cast<std::uint32_t>(getpid());
  s.data.process.parent_pid = static_cast<std::uint32_t>(getppid());
  std::uint32_t version = 0;
  cuptiGetVersion(&version);
  s.data.process.cupti_version = version;
  s.data.process.trace_start_ns = now_ns();
  return true;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  std::call_once(once, [] {
    Session& s = session();
    s.enabled = true;
    if (!start_tracing(s)) return;
    point_nvtx_at_cupti();
    std::atexit(write_trace);
    install_signal_handlers();
    previous_terminate = std::set_terminate(on_terminate);
    pthread_atfork(nullptr, nullptr, in_forked_child);
  });
  return 1;
}
