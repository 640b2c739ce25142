// PyTorch profiler traces: the chrome trace JSON that torch.profiler's export_chrome_trace
// writes (Kineto), plain or gzipped.
//
// Read: kernels ("cat": "kernel") with their args (grid, block, registers per thread, shared
// memory, device, stream, context, correlation), memory copies and sets ("gpu_memcpy",
// "gpu_memset"), record_function ranges as stages (pytorch_stages.h says how), the CUDA
// runtime and driver calls that launched the GPU work (for stages and each launch's CPU
// thread and process), and "deviceProperties" as Devices. Everything else is skipped (an
// event of another category that begins as Kineto writes it, {"ph": "X", "cat": ..., is not
// even parsed: malformed inside, it is no error).
//
// Times: "ts" and "dur" are microseconds with three decimals; they are read from their text
// to whole nanoseconds, exactly (a double would lose the last digit of a 13-digit "ts").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernlens/ingest/reader.h"

namespace kernlens::ingest {

// Whether `bytes` (the start of a file) look like a chrome trace: a JSON object with a
// "traceEvents" member near its start. Cheap: looks at the first MiB only.
bool looks_like_chrome_trace(std::string_view bytes);
// For bytes that are not a chrome trace: a JSON document (no export kernlens reads but this
// one is JSON). nullopt for anything else.
std::optional<NearMiss> json_near_miss(std::string_view bytes);

Status read_pytorch_trace(std::string_view bytes, ReadContext& ctx);
// The same, a large file window by window: a plain file mapped and parsed where its bytes lie
// (the pages behind given back), a gzip one inflated through a bounded buffer; a window's
// events are read on ReadOptions::threads threads.
Status read_pytorch_trace_file(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx);
// The same in windows of `window_bytes` (tests cut small windows), the file read as `access`
// says (reader.h).
Status read_pytorch_trace_file(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx,
                               std::size_t window_bytes, FileAccess access = FileAccess::kMapped);

// A decimal number of microseconds as JSON writes it ("4507091301106.658", "-2", "1.5e3") in
// whole nanoseconds: exact for plain decimals (digits past the third decimal round half
// away from zero), through a double for exponent forms. std::nullopt when `text` is not a
// number or does not fit.
std::optional<std::int64_t> microseconds_to_ns(std::string_view text);

}  // namespace kernlens::ingest
