// The PyTorch profiler trace reader on real H100 traces (tests/fixtures/pytorch), on those
// traces with events taken out (as other profiler settings leave them), and damaged.
#include "kernlens/ingest/pytorch/trace.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>
#include <map>
#include <random>
#include <nlohmann/json.hpp>
#include <string>

#include "kernlens/analysis/aggregate.h"
#include "kernlens/ingest/json/trace_tokenizer.h"
#include "test_util.h"

namespace kernlens {
namespace {

using test::fixture_bytes;
using test::read_bytes;
using test::read_fixture;
using OrderedJson = nlohmann::ordered_json;

std::string path_of(const model::Profile& p, const model::Launch& l) { return model::push_pop_path(p.stages[l.stage]); }

// Launches per stage path.
std::map<std::string, int> launches_by_stage(const model::Profile& p) {
  std::map<std::string, int> n;
  for (const auto& l : p.launches) ++n[path_of(p, l)];
  return n;
}

std::int64_t kernel_ns(const model::Profile& p) {
  std::int64_t ns = 0;
  for (const auto& l : p.launches) {
    if (l.kind == model::LaunchKind::kKernel) ns += static_cast<std::int64_t>(*l.duration_ns);
  }
  return ns;
}

// A fixture with the events `drop` selects taken out, written back as JSON.
std::string without_events(const std::string& fixture, const std::function<bool(const OrderedJson&)>& drop) {
  OrderedJson doc = OrderedJson::parse(fixture_bytes(fixture));
  OrderedJson& events = doc["traceEvents"];
  OrderedJson kept = OrderedJson::array();
  for (auto& e : events) {
    if (!drop(e)) kept.push_back(std::move(e));
  }
  events = std::move(kept);
  return doc.dump(1);
}

bool category_in(const OrderedJson& e, std::initializer_list<const char*> cats) {
  for (const char* c : cats) {
    if (e.value("cat", "") == c) return true;
  }
  return false;
}

TEST(MicrosecondsToNs, ExactDecimalsRoundingAndRejects) {
  using ingest::microseconds_to_ns;
  EXPECT_EQ(microseconds_to_ns("4507091301106.658"), 4507091301106658);  // a double would miss by 1
  EXPECT_EQ(microseconds_to_ns("3.104 \n "), 3104);
  EXPECT_EQ(microseconds_to_ns("0.769"), 769);
  EXPECT_EQ(microseconds_to_ns("12"), 12000);
  EXPECT_EQ(microseconds_to_ns("1.5"), 1500);
  EXPECT_EQ(microseconds_to_ns("1.2344"), 1234);
  EXPECT_EQ(microseconds_to_ns("1.2345"), 1235);
  EXPECT_EQ(microseconds_to_ns("-2.5"), -2500);
  EXPECT_EQ(microseconds_to_ns("1.5e3"), 1500000);
  EXPECT_EQ(microseconds_to_ns("2E-3"), 2);
  // Past 15 whole digits (the one-pass form's) up to the limit of 73 years either way.
  EXPECT_EQ(microseconds_to_ns("999999999999999.9995"), 999999999999999999 + 1);
  EXPECT_EQ(microseconds_to_ns("1000000000000000.25"), 1000000000000000250);
  EXPECT_EQ(microseconds_to_ns("-9223372036854774.0004"), -9223372036854774000);
  EXPECT_EQ(microseconds_to_ns("0000000000000000001.5"), 1500);
  for (const char* bad : {"", "-", "1.", ".5", "1.2.3", "abc", "\"1.0\"", "1e", "9223372036854775.807", "1e300",
                          "- 1", "1 .5", "1.5x", "+1", "1.-5", "12345678901234567.5"}) {
    EXPECT_EQ(microseconds_to_ns(bad), std::nullopt) << bad;
  }
}

// Random decimals against an exact reference (whole and fraction digits as integers).
TEST(MicrosecondsToNs, RandomDecimalsExactly) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 20000; ++i) {
    const int whole_digits = static_cast<int>(rng() % 19) + 1, fraction_digits = static_cast<int>(rng() % 7);
    std::string text = rng() % 4 == 0 ? "-" : "";
    std::uint64_t whole = 0;  // 19 digits fit
    for (int d = 0; d < whole_digits; ++d) {
      const int digit = static_cast<int>(rng() % 10);
      text += static_cast<char>('0' + digit);
      whole = whole * 10 + static_cast<std::uint64_t>(digit);
    }
    std::string fraction;
    for (int d = 0; d < fraction_digits; ++d) fraction += static_cast<char>('0' + rng() % 10);
    if (!fraction.empty()) text += "." + fraction;
    const bool fits = whole <= INT64_MAX / 1000 - 1;
    std::int64_t ns = fits ? static_cast<std::int64_t>(whole) * 1000 : 0;
    for (int d = 0; d < 3; ++d) ns += (d < fraction_digits ? fraction[d] - '0' : 0) * (d == 0 ? 100 : d == 1 ? 10 : 1);
    if (fraction_digits > 3 && fraction[3] >= '5') ++ns;
    const auto got = ingest::microseconds_to_ns(text);
    if (!fits) {
      EXPECT_EQ(got, std::nullopt) << text;
    } else {
      ASSERT_TRUE(got) << text;
      EXPECT_EQ(*got, text[0] == '-' ? -ns : ns) << text;
    }
  }
}

TEST(PytorchTrace, LlamaKernelsMemsetsAndDevice) {
  auto r = read_fixture("pytorch/llama_torch_trace.json.gz");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const model::Profile& p = r.profile;
  EXPECT_EQ(p.inputs[0].format, model::InputFormat::kPytorchTrace);
  EXPECT_TRUE(p.inputs[0].warnings.empty());
  int kernels = 0, memsets = 0;
  for (const auto& l : p.launches) {
    kernels += l.kind == model::LaunchKind::kKernel;
    memsets += l.kind == model::LaunchKind::kMemset;
  }
  EXPECT_EQ(kernels, 5608);
  EXPECT_EQ(memsets, 9);
  // The sum of the trace's 5608 kernel "dur" values, computed with Python's decimal module
  // (tests/independent/check_pytorch_totals.py recomputes it on every run).
  EXPECT_EQ(kernel_ns(p), 14645195);

  // The first kernel event, field by field as the trace writes it.
  const model::Launch& k = p.launches[0];
  EXPECT_EQ(p.names[k.name], "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)");
  EXPECT_EQ(k.start_ns, 4480540436238493);
  EXPECT_EQ(k.duration_ns, 3072);
  EXPECT_EQ(k.id, 20);  // correlation
  EXPECT_EQ(k.device_ordinal, 0);
  EXPECT_EQ(k.stream_id, 7);
  EXPECT_EQ(k.context_id, 1);
  const model::LaunchConfig& c = p.config_of(k);
  EXPECT_EQ(c.grid, (model::Dim3{1024, 1, 1}));
  EXPECT_EQ(c.block, (model::Dim3{128, 1, 1}));
  EXPECT_EQ(c.registers_per_thread, 32);
  EXPECT_EQ(c.static_shared_bytes, 0);  // "shared memory": 0, so neither kind
  EXPECT_EQ(c.dynamic_shared_bytes, 0);
  EXPECT_EQ(k.thread_id, 727);  // the CPU thread of its cudaLaunchKernel
  EXPECT_EQ(p.processes[k.process].pid, 727);
  EXPECT_EQ(p.processes[k.process].name, "python3");
  EXPECT_EQ(k.stage, 0u);

  const model::Device* d = p.find_device(0);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d->cc, "9.0");
  EXPECT_EQ(d->sm_count, 132);
  EXPECT_EQ(d->memory_total_bytes, 85017493504);
  EXPECT_EQ(d->max_threads_per_sm, 2048);
  EXPECT_EQ(d->max_shared_memory_per_sm_bytes, 233472);
  EXPECT_TRUE(p.stage_ranges.empty());

  // No record_function ranges: the stage table is the whole run, with its idle gaps.
  analysis::Aggregate agg = analysis::aggregate(p, test::builtin_classifier());
  ASSERT_EQ(agg.stages.size(), 1u);
  EXPECT_EQ(agg.stages[0].name, analysis::kWholeRunStage);
  EXPECT_EQ(agg.stages[0].launches, 5608u);
  EXPECT_EQ(agg.stages[0].gaps->count, 5607u);  // decode is launch-bound: a gap after every kernel
  EXPECT_LT(*agg.stages[0].busy_fraction(), 0.1);
}

TEST(PytorchTrace, SharedMemoryIsAMetricWhenAsked) {
  auto r = read_fixture("pytorch/qwen_compile_trace.json.gz");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const model::Profile& p = r.profile;
  auto id = p.metrics.find("shared memory");
  ASSERT_TRUE(id);
  int with_shared = 0;
  for (const auto& l : p.launches) {
    const model::MetricSample* m = p.find_metric(l, *id);
    if (!m) continue;
    ++with_shared;
    EXPECT_GT(m->value, 0);
    EXPECT_EQ(p.config_of(l).static_shared_bytes, model::kUnknown);  // the sum of both, which does not split
  }
  EXPECT_GT(with_shared, 0);
}

TEST(PytorchTrace, MemcpyWithBytes) {
  auto r = read_fixture("pytorch/gemm_zoo_trace.json.gz");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  int copies = 0;
  for (const auto& l : r.profile.launches) {
    if (l.kind != model::LaunchKind::kMemcpy) continue;
    ++copies;
    EXPECT_EQ(r.profile.names[l.name], "Memcpy HtoD (Pageable -> Device)");
    EXPECT_EQ(l.bytes, 4);
    EXPECT_EQ(l.duration_ns, 864);
  }
  EXPECT_EQ(copies, 1);
}

TEST(PytorchTrace, RecordFunctionStagesWithExtentsOfTheirKernels) {
  auto r = read_fixture("pytorch/llama_stages_trace.json.gz");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const model::Profile& p = r.profile;
  auto n = launches_by_stage(p);
  EXPECT_EQ(n["prefill"], 342 + 9);  // kernels + the memsets launched in it
  EXPECT_EQ(n["decode"], 5250);
  EXPECT_EQ(n[""], 0);
  ASSERT_EQ(p.stage_ranges.size(), 2u);
  // Kineto's own GPU-side "prefill" spans 11,089.198 us: its ts and dur round the first and
  // last kernel times (written to the same 1 ns) outwards by 1 ns.
  const model::StageRange& prefill = p.stage_ranges[0];
  EXPECT_EQ(model::push_pop_path(p.stages[prefill.stage]), "prefill");
  EXPECT_EQ(prefill.end_ns - prefill.start_ns, 11089196);
  analysis::Aggregate agg = analysis::aggregate(p, test::builtin_classifier());
  ASSERT_EQ(agg.stages.size(), 3u);
  for (const auto& s : agg.stages) {
    ASSERT_TRUE(s.busy_fraction()) << s.name;
    EXPECT_GT(*s.busy_fraction(), 0.05) << s.name;
    EXPECT_LT(*s.busy_fraction(), 0.2) << s.name;  // a small model's decode waits on launches
  }
  EXPECT_EQ(agg.stages[1].launches + agg.stages[2].launches, agg.stages[0].launches);
}

// The launches per stage of nested_stages_trace.json.gz, two profiled steps of: prefill
// (a kernel, layer0 and layer1 of 3 kernels each, a kernel), decode (3 x layer0 of 3),
// side (2 GEMM kernels on a second stream), then one kernel in the step itself.
const std::map<std::string, int> kNestedStages = {
    {"ProfilerStep", 2}, {"ProfilerStep/prefill", 4}, {"ProfilerStep/prefill/layer0", 6},
    {"ProfilerStep/prefill/layer1", 6}, {"ProfilerStep/decode/layer0", 18}, {"ProfilerStep/side", 4},
};

TEST(PytorchTrace, NestedRangesAndProfilerStepsFromTheCpuSide) {
  auto r = read_fixture("pytorch/nested_stages_trace.json.gz");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const model::Profile& p = r.profile;
  EXPECT_EQ(launches_by_stage(p), kNestedStages);
  for (const auto& l : p.launches) {
    EXPECT_EQ(l.stream_id == 13, path_of(p, l) == "ProfilerStep/side") << p.names[l.name];
  }
  // One extent per range instance that launched a kernel: per step, the step, prefill and
  // its two layers, decode and its three layers, side. "decode" has no gpu_user_annotation
  // at all (no kernel of its own): its extent comes from its layers' kernels.
  EXPECT_EQ(p.stage_ranges.size(), 18u);
  analysis::Aggregate agg = analysis::aggregate(p, test::builtin_classifier());
  std::map<std::string, const analysis::StageRow*> rows;
  for (const auto& s : agg.stages) rows[s.name] = &s;
  ASSERT_TRUE(rows.count("ProfilerStep/decode"));
  EXPECT_EQ(rows["ProfilerStep/decode"]->launches, 18u);
  EXPECT_GT(*rows["ProfilerStep/decode"]->wall_ns, *rows["ProfilerStep/decode/layer0"]->wall_ns);
  EXPECT_EQ(rows["ProfilerStep"]->launches, 40u);
}

TEST(PytorchTrace, FlowsStandInForMissingCudaCalls) {
  auto r = read_bytes(without_events("pytorch/nested_stages_trace.json.gz", [](const OrderedJson& e) {
    return category_in(e, {"cuda_runtime", "cuda_driver"});
  }));
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  EXPECT_EQ(launches_by_stage(r.profile), kNestedStages);
}

// How with_correlations changes a trace besides its ids: not; each CUDA call followed by a
// copy of itself on another thread, the flows taken out (the first call of an id launched
// it); the flows put first, on another thread (a call stands before a flow).
enum class Decoys { kNone, kSecondCalls, kFlowsFirst };

// A fixture with every correlation id (a call's and a kernel's "correlation", a flow's "id")
// changed by `f`, and `decoys` added.
std::string with_correlations(const std::function<std::int64_t(std::int64_t)>& f, Decoys decoys) {
  OrderedJson doc = OrderedJson::parse(fixture_bytes("pytorch/nested_stages_trace.json.gz"));
  OrderedJson flows = OrderedJson::array(), events = OrderedJson::array();
  for (auto& e : doc["traceEvents"]) {
    if (e.contains("args") && e["args"].contains("correlation")) e["args"]["correlation"] = f(e["args"]["correlation"]);
    if (e.value("cat", "") == "ac2g") {
      e["id"] = f(e["id"]);
      if (decoys == Decoys::kSecondCalls) continue;
      if (decoys == Decoys::kFlowsFirst) {
        e["tid"] = 999;
        flows.push_back(std::move(e));
        continue;
      }
    }
    events.push_back(e);
    if (decoys == Decoys::kSecondCalls && category_in(e, {"cuda_runtime", "cuda_driver"})) {
      e["tid"] = 999;
      events.push_back(std::move(e));
    }
  }
  for (auto& e : events) flows.push_back(std::move(e));
  doc["traceEvents"] = std::move(flows);
  return doc.dump(1);
}

// Each launch's stage and CPU thread.
std::vector<std::string> stages_and_threads(const model::Profile& p) {
  std::vector<std::string> out;
  for (const auto& l : p.launches) out.push_back(path_of(p, l) + " on " + std::to_string(l.thread_id));
  return out;
}

// Calls are searched in place where the trace lists them in id order, as kineto writes them,
// and sorted first where it does not (ids falling, or the flows first); both take the first
// call of an id, and a call over a flow.
TEST(PytorchTrace, CallsOfLaunchesByCorrelationIdsInOrderOrNot) {
  const auto original = read_fixture("pytorch/nested_stages_trace.json.gz");
  ASSERT_TRUE(original.status.ok());
  const std::vector<std::string> expected = stages_and_threads(original.profile);
  for (Decoys decoys : {Decoys::kNone, Decoys::kSecondCalls, Decoys::kFlowsFirst}) {
    // Falling ids (the last call's the smallest) stay in CUPTI's 32 bits, as a launch keeps them.
    for (std::int64_t scale : {1, 1000003, -1000003}) {
      const std::int64_t base = scale > 0 ? 7 : 2000000000;
      auto r = read_bytes(with_correlations([&](std::int64_t id) { return base + id * scale; }, decoys));
      ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
      EXPECT_EQ(stages_and_threads(r.profile), expected) << "ids x " << scale << ", decoys " << static_cast<int>(decoys);
      EXPECT_EQ(launches_by_stage(r.profile), kNestedStages);
    }
  }
}

TEST(PytorchTrace, GpuSideRangesWhenNothingLinksLaunchesToTheCpu) {
  auto r = read_bytes(without_events("pytorch/nested_stages_trace.json.gz", [](const OrderedJson& e) {
    return category_in(e, {"cuda_runtime", "cuda_driver", "ac2g"});
  }));
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  // Kineto's GPU-side ranges, nested by time on their stream: they cover only the kernels
  // whose innermost range they are, so decode's layers stand alone and a step holds only
  // the kernel launched directly in it.
  const std::map<std::string, int> expected = {
      {"ProfilerStep", 2}, {"prefill", 4}, {"prefill/layer0", 6}, {"prefill/layer1", 6},
      {"layer0", 18}, {"side", 4},
  };
  EXPECT_EQ(launches_by_stage(r.profile), expected);
  for (const auto& l : r.profile.launches) EXPECT_EQ(l.thread_id, model::kUnknown);
}

TEST(PytorchTrace, RangeThatNeverEndedWarnsAndRunsToTheEnd) {
  // The last "side" range without its "dur": it then holds the step's last kernel too.
  auto r = read_bytes(without_events("pytorch/nested_stages_trace.json.gz", [](const OrderedJson& e) {
    if (e.value("cat", "") == "user_annotation" && e.value("name", "") == "side" && e["args"]["External id"] == 65) {
      const_cast<OrderedJson&>(e).erase("dur");
    }
    return false;
  }));
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  const auto& warnings = r.profile.inputs[0].warnings;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_GT(warnings[0].line, 1);
  EXPECT_NE(warnings[0].message.find("range 'side' has no \"dur\": it never ended"), std::string::npos)
      << warnings[0].message;
  auto n = launches_by_stage(r.profile);
  EXPECT_EQ(n["ProfilerStep/side"], 5);
  EXPECT_EQ(n["ProfilerStep"], 1);
}

TEST(PytorchTrace, StreamedWindowsAndWholeBytesAgree) {
  const std::string bytes = fixture_bytes("pytorch/llama_stages_trace.json.gz");
  test::TempDir dir;
  dir.write("trace.json", bytes);
  model::Profile streamed, whole, inflated;
  streamed.inputs.push_back({"trace.json", model::InputFormat::kPytorchTrace, "", {}, {}});
  ingest::ReadContext ctx{"trace.json", streamed, 0, {}};
  ASSERT_TRUE(ingest::read_pytorch_trace_file(dir.file("trace.json"), bytes.size(), ctx).ok());  // 15 windows
  ASSERT_TRUE(ingest::read_input_bytes(bytes, "trace.json", whole).ok());
  ASSERT_TRUE(ingest::read_input(test::fixture("pytorch/llama_stages_trace.json.gz"), inflated).ok());
  for (const model::Profile* p : {&streamed, &inflated}) {
    ASSERT_EQ(p->launches.size(), whole.launches.size());
    for (std::size_t i = 0; i < whole.launches.size(); ++i) {
      const model::Launch &a = p->launches[i], &b = whole.launches[i];
      ASSERT_EQ(p->names[a.name], whole.names[b.name]);
      ASSERT_EQ(a.start_ns, b.start_ns);
      ASSERT_EQ(a.duration_ns, b.duration_ns);
      ASSERT_EQ(path_of(*p, a), path_of(whole, b));
    }
    EXPECT_EQ(p->stage_ranges.size(), whole.stage_ranges.size());
  }
}

TEST(PytorchTrace, BadInputsAreClearErrors) {
  const std::string trace = fixture_bytes("pytorch/nested_stages_trace.json.gz");
  const std::size_t kernel_at = trace.find("\"cat\": \"kernel\"");
  ASSERT_NE(kernel_at, std::string::npos);
  auto cut_and_patch = [&](std::string s, const std::string& from, const std::string& to) {
    return s.replace(s.find(from), from.size(), to);
  };
  const std::pair<std::string, std::string> cases[] = {
      {trace.substr(0, kernel_at), "the file ends inside an event: the trace is truncated"},
      {trace.substr(0, trace.size() / 2), "the trace is truncated"},
      {cut_and_patch(trace, "\"cat\": \"kernel\"", "\"cat\": \"kernel\" \"x\": 1"), "malformed JSON in the event at byte"},
      {cut_and_patch(trace, "\"dur\": 1.152", "\"dur\": 1.1.52"), "\"dur\" is not a time in microseconds within 73 years: 1.1.52"},
      {cut_and_patch(trace, "\"dur\": 1.152", "\"dur\": 9e15"), "\"dur\" is not a time in microseconds within 73 years: 9e15"},
      {cut_and_patch(trace, "\n  },\n  {", "\n  }\n  {"), "expected ',' or ']' after an event, found '{'"},
      {trace + "{}", "more data after the end of the JSON document"},
      {without_events("pytorch/nested_stages_trace.json.gz", [](const OrderedJson& e) { return category_in(e, {"kernel"}); }),
       "no kernel events (\"cat\": \"kernel\") in the trace"},
      {"{\"schemaVersion\": 1, \"deviceProperties\": []}", "a JSON document without \"traceEvents\""},
      {"{\"traceEvents\": {}}", "\"traceEvents\" is not an array"},
      {"{\"traceEvents\": [1]}", "expected an event (a JSON object) in \"traceEvents\", found '1'"},
  };
  for (const auto& [bytes, message] : cases) {
    auto r = read_bytes(bytes, "t.json");
    ASSERT_FALSE(r.status.ok()) << message;
    EXPECT_NE(r.status.error().message.find(message), std::string::npos) << r.status.error().to_string();
  }
  // A cut trace's error names the line where the cut event starts.
  auto cut = read_bytes(trace.substr(0, kernel_at + 100), "t.json");
  ASSERT_FALSE(cut.status.ok());
  EXPECT_EQ(cut.status.error().line, std::count(trace.begin(), trace.begin() + kernel_at, '\n'));
}

// A launch keeps CUPTI's 32-bit stream and context ids: a wider one in a trace reads as unknown
// (as an out-of-range device does), never as a wrapped number.
TEST(PytorchTrace, StreamAndContextBeyond32BitsAreUnknown) {
  std::string trace = fixture_bytes("pytorch/nested_stages_trace.json.gz");
  const std::string from = "\"context\": 1,      \"stream\": 7, \"correlation\": 260";
  const std::size_t at = trace.find(from);
  ASSERT_NE(at, std::string::npos);
  trace.replace(at, from.size(), "\"context\": 4294967297,      \"stream\": 4294967303, \"correlation\": 260");
  auto r = read_bytes(trace, "t.json");
  ASSERT_TRUE(r.status.ok()) << r.status.error().to_string();
  int wide = 0;
  for (const auto& l : r.profile.launches) {
    if (l.id != 260) continue;
    ++wide;
    EXPECT_EQ(l.stream_id, model::kUnknown);
    EXPECT_EQ(l.context_id, model::kUnknown);
  }
  EXPECT_EQ(wide, 1);
}

// A correlation id beyond CUPTI's 32 bits reads as unknown too (model::Id32), not wrapped.
TEST(PytorchTrace, CorrelationBeyond32BitsIsUnknown) {
  std::string trace = fixture_bytes("pytorch/nested_stages_trace.json.gz");
  auto unknown_ids = [](const std::string& bytes) {
    auto r = read_bytes(bytes, "t.json");
    EXPECT_TRUE(r.status.ok()) << r.status.error().to_string();
    return std::count_if(r.profile.launches.begin(), r.profile.launches.end(),
                         [](const model::Launch& l) { return l.id == model::kUnknown; });
  };
  const auto before = unknown_ids(trace);
  const std::string from = "\"stream\": 7, \"correlation\": 260";
  const std::size_t at = trace.find(from);
  ASSERT_NE(at, std::string::npos);
  trace.replace(at, from.size(), "\"stream\": 7, \"correlation\": 4294967556");  // 2^32 + 260
  EXPECT_EQ(unknown_ids(trace), before + 1);
}

// Events of categories the reader does not use are skipped unread when they begin
// {"ph": "X", "cat": ...} (as Kineto writes them): malformed inside, they are no error; one
// that names "cat" or "ph" again is decoded, and its last "cat" counts, as for any event.
TEST(PytorchTrace, UnusedCategoriesAreSkippedUnlessTheyNameTheirKeysAgain) {
  const std::string kernel = R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2})";
  auto trace = [&](const std::string& event) { return "{\"traceEvents\": [" + event + ", " + kernel + "]}"; };
  auto skipped = read_bytes(trace(R"({"ph": "X", "cat": "cpu_op", "name": "op", "x": 1 2, "args": {"a": [}]})"), "t.json");
  ASSERT_TRUE(skipped.status.ok()) << skipped.status.error().to_string();
  EXPECT_EQ(skipped.profile.launches.size(), 1u);
  for (const char* event : {R"({"ph": "X", "cat": "cpu_op", "name": "k2", "ts": 1, "dur": 2, "cat": "kernel"})",
                            R"({"ph": "X", "cat": "cpu_op", "ph": "X", "name": "k2", "ts": 1, "dur": 2, "cat": "kernel"})"}) {
    auto decoded = read_bytes(trace(event), "t.json");
    ASSERT_TRUE(decoded.status.ok()) << decoded.status.error().to_string();
    EXPECT_EQ(decoded.profile.launches.size(), 2u) << event;
  }
  // A later "cat" or "ph" at every offset of the vector loops (32 and 16 bytes) and their
  // tails is found; a near miss ("cab", "p") is not.
  for (std::size_t pad = 0; pad < 90; ++pad) {
    const std::string name(pad, 'x');
    for (const char* key : {"cat", "ph"}) {
      const std::string again = fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "{}", "ts": 1, "dur": 2, "{}": )",
                                            name, key) +
                                (std::string(key) == "cat" ? R"("kernel"})" : R"("X", "cat": "kernel"})");
      EXPECT_EQ(read_bytes(trace(again), "t.json").profile.launches.size(), 2u) << again;
    }
    const std::string near = fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "{}", "cab": "kernel", "p": 1}})", name);
    EXPECT_EQ(read_bytes(trace(near), "t.json").profile.launches.size(), 1u) << near;
  }
  // Not in Kineto's order: decoded, and a malformed one is an error.
  auto malformed = read_bytes(trace(R"({"cat": "cpu_op", "ph": "X", "x": 1 2})"), "t.json");
  ASSERT_FALSE(malformed.status.ok());
  EXPECT_NE(malformed.status.error().message.find("malformed JSON in the event"), std::string::npos);
}

// Events whose "ph" the reader never uses (all but "X", "s" and "M": the GPU end "f" of every
// flow, instants) are skipped unread too, unless they name "ph" again; "s" flows (the CPU end,
// which links calls) and an escaped "ph" are decoded, so a malformed one is an error.
TEST(PytorchTrace, PhasesNeverUsedAreSkippedUnlessTheyNameThePhaseAgain) {
  const std::string kernel = R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2})";
  auto trace = [&](const std::string& event) { return "{\"traceEvents\": [" + event + ", " + kernel + "]}"; };
  for (const char* event : {R"({"ph": "f", "id": 1 2, "cat": "ac2g", "name": "ac2g", "bp": "e"})",
                            R"({"ph": "i", "args": {"a": [}]})", R"({"ph": "", "x": tru})"}) {
    auto skipped = read_bytes(trace(event), "t.json");
    ASSERT_TRUE(skipped.status.ok()) << event << ": " << skipped.status.error().to_string();
    EXPECT_EQ(skipped.profile.launches.size(), 1u) << event;
  }
  auto decoded = read_bytes(trace(R"({"ph": "f", "ph": "X", "cat": "kernel", "name": "k2", "ts": 1, "dur": 2})"), "t.json");
  ASSERT_TRUE(decoded.status.ok()) << decoded.status.error().to_string();
  EXPECT_EQ(decoded.profile.launches.size(), 2u);
  for (const char* event : {R"({"ph": "s", "id": 1 2, "cat": "ac2g"})", R"({"ph": "M", "x": 1 2})",
                            R"({"ph": "\u0066", "x": 1 2})"}) {
    auto malformed = read_bytes(trace(event), "t.json");
    ASSERT_FALSE(malformed.status.ok()) << event;
    EXPECT_NE(malformed.status.error().message.find("malformed JSON in the event"), std::string::npos)
        << malformed.status.error().to_string();
  }
}

// Feeding a trace in two windows, cut anywhere, yields the same parts as one window.
TEST(TraceTokenizer, AnyWindowCutGivesTheSameParts) {
  const std::string trace = fixture_bytes("pytorch/gemm_zoo_trace.json.gz");
  // The head, three events and the tail: every kind of part, small enough to cut everywhere.
  std::size_t third = trace.find("\"traceEvents\"");
  for (int i = 0; i < 3; ++i) third = trace.find("\n  {", third + 1);
  const std::string doc = trace.substr(0, trace.find("\n  }", third) + 4) + "\n  ],\n  \"traceName\": \"x\"\n}\n";
  using Part = std::tuple<int, std::string, std::string, std::uint64_t, std::int64_t>;
  auto parts_of = [&](std::size_t cut) {
    ingest::TraceTokenizer tokens("t.json");
    std::vector<Part> parts;
    std::string window = doc.substr(0, cut);
    for (bool last : {false, true}) {
      tokens.set_window(window, last);
      while (true) {
        auto part = tokens.next();
        EXPECT_TRUE(part.ok()) << part.error().to_string();
        if (!part.ok() || !*part) break;
        const ingest::TracePart& t = **part;
        parts.emplace_back(static_cast<int>(t.kind), std::string(t.key), std::string(t.value), t.offset, t.line);
      }
      window = window.substr(tokens.consumed()) + doc.substr(cut);
    }
    EXPECT_TRUE(tokens.saw_trace_events());
    return parts;
  };
  const std::vector<Part> whole = parts_of(doc.size());
  ASSERT_EQ(whole.size(), 13u);  // 9 members before "traceEvents", 3 events, "traceName"
  for (std::size_t cut = 0; cut < doc.size(); ++cut) ASSERT_EQ(parts_of(cut), whole) << "cut at " << cut;
}

}  // namespace
}  // namespace kernlens
