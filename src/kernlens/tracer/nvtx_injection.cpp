// The tracer's NVTX side: libkernlens_tracer.so is also an NVTX injection library. NVTX (v3
// headers compiled into each library, and the v2 libnvToolsExt) loads the library named by
// NVTX_INJECTION64_PATH at a library's first NVTX call and calls InitializeInjectionNvtx2,
// which fills NVTX's function table with the handlers below (nvtxDetail/nvtxInit.h describes
// the protocol; nsys works the same way).
//
// Why not CUPTI's NVTX callbacks: they need NVTX pointed at the very libcupti the tracer uses,
// and a PyTorch process already holds its own libcupti (the pip wheel's) before CUDA loads
// the tracer, so a path given up front names a second, silent CUPTI. CUPTI also allows a single
// callback subscriber, which torch.profiler wants too. Injected directly, ranges reach the
// tracer whichever CUPTI is loaded, even ranges opened before CUDA starts.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <cwchar>
#include <string>

#include "kernlens/tracer/session.h"

namespace kernlens::tracer {

void register_exit_writer();  // tracer.cpp

namespace {

// Handles NVTX gives back to the program. Never freed: the program may use them until exit.
struct Registered {
  std::uint32_t string_id;
};

template <class Handle>
Handle handle_of(std::uint32_t string_id) {
  return reinterpret_cast<Handle>(new Registered{string_id});
}

template <class Handle>
std::uint32_t string_of(Handle h) {
  return h ? reinterpret_cast<const Registered*>(h)->string_id : 0;
}

// Wide strings (the W calls and UNICODE messages) are kept as their ASCII characters.
std::string narrow(const wchar_t* text) {
  std::string out;
  for (; text && *text; ++text) out += *text < 128 ? static_cast<char>(*text) : '?';
  return out;
}

std::uint32_t message_id(Session& s, const nvtxEventAttributes_t* attr) {
  if (!attr) return 0;
  switch (attr->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return attr->message.ascii ? s.strings.intern(attr->message.ascii) : 0;
    case NVTX_MESSAGE_TYPE_UNICODE: return s.strings.intern(narrow(attr->message.unicode));
    case NVTX_MESSAGE_TYPE_REGISTERED: return string_of(attr->message.registered);
    default: return 0;
  }
}

// Where a range's name comes from, resolved under the session's lock.
auto ascii_name(const char* m) {
  return [m](Session& s) { return s.strings.intern(m ? m : ""); };
}
auto wide_name(const wchar_t* m) {
  return [m](Session& s) { return s.strings.intern(narrow(m)); };
}
auto attribute_name(const nvtxEventAttributes_t* a) {
  return [a](Session& s) { return message_id(s, a); };
}

std::uint64_t stack_key(std::uint32_t thread, std::uint32_t domain) {
  return (static_cast<std::uint64_t>(thread) << 32) | domain;
}

// Each handler returns what NVTX documents: push and pop the 0-based level, start the new id.
int push(std::uint32_t domain, auto name_of) {
  Session& s = session();
  if (!s.recording) return 0;
  const std::uint64_t start = now_ns();
  std::lock_guard lock(s.mutex);
  auto& stack = s.stacks[stack_key(this_thread_id(), domain)];
  stack.push_back(OpenRange{domain, name_of(s), this_thread_id(), start});
  return static_cast<int>(stack.size()) - 1;
}

int pop(std::uint32_t domain) {
  Session& s = session();
  if (!s.recording) return 0;
  const std::uint64_t end = now_ns();
  std::lock_guard lock(s.mutex);
  auto& stack = s.stacks[stack_key(this_thread_id(), domain)];
  if (stack.empty()) return -1;  // a pop without a push: NVTX reports an error level too
  const OpenRange open = stack.back();
  stack.pop_back();
  s.data.ranges.push_back(
      tf::RangeRecord{open.domain, open.name, tf::RangeKind::kPushPop, open.thread, open.start_ns, end});
  return static_cast<int>(stack.size());
}

nvtxRangeId_t start(std::uint32_t domain, auto name_of) {
  Session& s = session();
  if (!s.recording) return 0;
  const std::uint64_t start = now_ns();
  std::lock_guard lock(s.mutex);
  const nvtxRangeId_t id = s.next_range_id++;
  s.started[id] = tf::RangeRecord{domain, name_of(s), tf::RangeKind::kStartEnd, this_thread_id(), start, tf::kOpenEnd};
  return id;
}

void end(nvtxRangeId_t id) {
  Session& s = session();
  if (!s.recording) return;
  const std::uint64_t end = now_ns();
  std::lock_guard lock(s.mutex);
  auto it = s.started.find(id);
  if (it == s.started.end()) return;
  it->second.end_ns = end;
  s.data.ranges.push_back(it->second);
  s.started.erase(it);
}

std::uint32_t intern(const std::string& text) {
  Session& s = session();
  std::lock_guard lock(s.mutex);
  return s.strings.intern(text);
}

// ---- the handlers, one per NVTX call that opens, closes or names a range --------------------

int NVTX_API range_push_a(const char* m) { return push(0, ascii_name(m)); }
int NVTX_API range_push_w(const wchar_t* m) { return push(0, wide_name(m)); }
int NVTX_API range_push_ex(const nvtxEventAttributes_t* a) { return push(0, attribute_name(a)); }
int NVTX_API range_pop() { return pop(0); }
nvtxRangeId_t NVTX_API range_start_a(const char* m) { return start(0, ascii_name(m)); }
nvtxRangeId_t NVTX_API range_start_w(const wchar_t* m) { return start(0, wide_name(m)); }
nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t* a) { return start(0, attribute_name(a)); }
void NVTX_API range_end(nvtxRangeId_t id) { end(id); }

int NVTX_API domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return push(string_of(d), attribute_name(a));
}
int NVTX_API domain_range_pop(nvtxDomainHandle_t d) { return pop(string_of(d)); }
nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return start(string_of(d), attribute_name(a));
}
void NVTX_API domain_range_end(nvtxDomainHandle_t, nvtxRangeId_t id) { end(id); }
nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) {
  return handle_of<nvtxDomainHandle_t>(intern(name ? name : ""));
}
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t* name) {
  return handle_of<nvtxDomainHandle_t>(intern(narrow(name)));
}
void NVTX_API domain_destroy(nvtxDomainHandle_t) {}  // handles stay valid: ranges may still name them
nvtxStringHandle_t NVTX_API register_string_a(nvtxDomainHandle_t, const char* text) {
  return handle_of<nvtxStringHandle_t>(intern(text ? text : ""));
}
nvtxStringHandle_t NVTX_API register_string_w(nvtxDomainHandle_t, const wchar_t* text) {
  return handle_of<nvtxStringHandle_t>(intern(narrow(text)));
}

struct Slot {
  unsigned int id;
  NvtxFunctionPointer handler;
};

template <class F>
NvtxFunctionPointer fn(F f) {
  return reinterpret_cast<NvtxFunctionPointer>(f);
}

// Points each slot's entry in NVTX's table for `module` at its handler; false when NVTX has no
// table for the module. Slots left alone stay no-ops (marks, categories, resource names).
bool install(const NvtxExportTableCallbacks& callbacks, NvtxCallbackModule module, std::initializer_list<Slot> slots) {
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks.GetModuleFunctionTable(module, &table, &size) || !table) return false;
  for (const Slot& slot : slots) {
    if (slot.id < size && table[slot.id]) *table[slot.id] = slot.handler;
  }
  return true;
}

}  // namespace
}  // namespace kernlens::tracer

using namespace kernlens::tracer;

// NVTX calls this once for each library whose NVTX initializes; nonzero means "injected".
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table ? get_table(NVTX_ETID_CALLBACKS) : nullptr);
  if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
  const bool core = install(*callbacks, NVTX_CB_MODULE_CORE,
                            {{NVTX_CBID_CORE_RangePushA, fn(&range_push_a)},
                             {NVTX_CBID_CORE_RangePushW, fn(&range_push_w)},
                             {NVTX_CBID_CORE_RangePushEx, fn(&range_push_ex)},
                             {NVTX_CBID_CORE_RangePop, fn(&range_pop)},
                             {NVTX_CBID_CORE_RangeStartA, fn(&range_start_a)},
                             {NVTX_CBID_CORE_RangeStartW, fn(&range_start_w)},
                             {NVTX_CBID_CORE_RangeStartEx, fn(&range_start_ex)},
                             {NVTX_CBID_CORE_RangeEnd, fn(&range_end)}});
  install(*callbacks, NVTX_CB_MODULE_CORE2,
          {{NVTX_CBID_CORE2_DomainRangePushEx, fn(&domain_range_push_ex)},
           {NVTX_CBID_CORE2_DomainRangePop, fn(&domain_range_pop)},
           {NVTX_CBID_CORE2_DomainRangeStartEx, fn(&domain_range_start_ex)},
           {NVTX_CBID_CORE2_DomainRangeEnd, fn(&domain_range_end)},
           {NVTX_CBID_CORE2_DomainCreateA, fn(&domain_create_a)},
           {NVTX_CBID_CORE2_DomainCreateW, fn(&domain_create_w)},
           {NVTX_CBID_CORE2_DomainDestroy, fn(&domain_destroy)},
           {NVTX_CBID_CORE2_DomainRegisterStringA, fn(&register_string_a)},
           {NVTX_CBID_CORE2_DomainRegisterStringW, fn(&register_string_w)}});
  if (core) register_exit_writer();
  return core ? 1 : 0;
}
