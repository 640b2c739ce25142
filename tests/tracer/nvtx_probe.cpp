// A program that uses NVTX (v3 headers, no CUDA) in every way the tracer records, for
// tests/unit/tracer_nvtx_test.cpp: run with NVTX_INJECTION64_PATH=libkernlens_tracer.so, it
// leaves a .kltrace of ranges only. It checks the values NVTX hands back itself (exit 3).
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

namespace {
int failures = 0;
void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "nvtx_probe: %s\n", what);
    ++failures;
  }
}
}  // namespace

int main() {
  expect(nvtxRangePushA("outer") == 0, "the first push returns level 0");
  expect(nvtxRangePushW(L"inner") == 1, "a nested push returns level 1");
  expect(nvtxRangePop() == 1, "the pop of the nested range returns level 1");

  nvtxDomainHandle_t domain = nvtxDomainCreateA("engine");
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = nvtxDomainRegisterStringA(domain, "step");
  expect(nvtxDomainRangePushEx(domain, &attr) == 0, "a domain has its own stack");
  nvtxDomainRangePop(domain);

  const nvtxRangeId_t request = nvtxRangeStartA("request");
  expect(request != 0, "a start returns an id");
  std::thread([request] {
    nvtxRangePushA("worker");
    nvtxRangeEnd(request);  // start/end ranges may end on another thread
    nvtxRangePop();
  }).join();

  const pid_t child = fork();  // a forked child writes no file of its own
  if (child == 0) {
    nvtxRangePushA("in the child");
    nvtxRangePop();
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);

  expect(nvtxRangePop() == 0, "the pop of the outer range returns level 0");
  expect(nvtxRangePop() < 0, "a pop without a push is an error");
  nvtxRangePushA("still open at exit");
  return failures == 0 ? 0 : 3;
}
