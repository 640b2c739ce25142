// Sweeps: the sweep file (its checks and their lines), the points it expands to, the sbatch
// script, Slurm's answers, each point's state, and the cross-model views and page.
// End to end (a real Slurm cluster, --local) in tests/sweep/sweep_e2e.py.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "kernlens/report/cross_model_report.h"
#include "kernlens/store/database.h"
#include "kernlens/store/query.h"
#include "kernlens/store/scaling.h"
#include "kernlens/store/scaling_rows.h"
#include "kernlens/sweep/plan.h"
#include "kernlens/sweep/slurm.h"
#include "kernlens/sweep/spec.h"
#include "kernlens/sweep/status.h"
#include "kernlens/sweep/submit.h"
#include "synthetic_runs.h"
#include "test_util.h"

namespace kernlens {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSpec = R"(name = "s"
run_root = "runs"
command = ["python3", "w.py", "--model", "{model}", "--batch", "{batch}", "--prompt", "{prompt}"]
profile = ["--tier", "quick", "--nvtx-include", "{stage}"]

[matrix]
model = ["llama", "qwen"]
batch = [1, 8]

[[zip]]
prompt = [128, 512]
stage = ["prefill", "decode"]

[tags]
tokens = "{prompt}"
note = "x{{literal}}"

[env]
HF_HOME = "/scratch/{model}"

[slurm]
partition = "gpu"
time = "00:30:00"
gpus = 1
max_parallel = 3
options = ["--qos=short"]
setup = ["source ${HOME}/venv/bin/activate"]
)";

std::size_t count_of(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (auto at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

Result<sweep::SweepSpec> parse(const std::string& text, const std::string& path = "/w/sweep.toml") {
  return sweep::parse_spec(text, path);
}

std::string plan_error_of(const std::string& text) {
  auto spec = parse(text);
  if (spec) {
    auto plan = sweep::make_plan(std::move(spec).value(), "kernlens");
    if (plan) return "no error";
    return plan.error().to_string();
  }
  return spec.error().to_string();
}

sweep::Plan plan_of(const std::string& text, const std::string& path) {
  auto spec = parse(text, path);
  EXPECT_TRUE(spec.ok()) << spec.error().to_string();
  auto plan = sweep::make_plan(std::move(spec).value(), "/opt/kernlens");
  EXPECT_TRUE(plan.ok()) << plan.error().to_string();
  return std::move(plan).value();
}

TEST(SweepSpec, ReadsEveryPart) {
  auto spec = parse(kSpec);
  ASSERT_TRUE(spec.ok()) << spec.error().to_string();
  EXPECT_EQ(spec->name, "s");
  EXPECT_EQ(spec->run_root, "/w/runs");
  EXPECT_EQ(spec->workdir, "/w");
  ASSERT_EQ(spec->axes.size(), 3u);  // model, batch, then the zip
  EXPECT_EQ(spec->axes[0].parameters[0].name, "model");  // file order, not toml++'s key order
  EXPECT_EQ(spec->axes[1].parameters[0].name, "batch");
  EXPECT_EQ(spec->axes[1].parameters[0].values, (std::vector<std::string>{"1", "8"}));
  EXPECT_EQ(spec->axes[2].parameters.size(), 2u);
  EXPECT_EQ(spec->axes[2].parameters[1].line, 12);
  EXPECT_EQ(spec->slurm.partition, "gpu");
  EXPECT_EQ(spec->slurm.gpus, 1);
  EXPECT_EQ(spec->slurm.max_parallel, 3);
  EXPECT_EQ(spec->slurm.setup.front(), "source ${HOME}/venv/bin/activate");  // shell, not a template
}

TEST(SweepPlan, PointsAreTheProductLastAxisFastest) {
  sweep::Plan plan = plan_of(kSpec, "/w/sweep.toml");
  ASSERT_EQ(plan.points.size(), 8u);
  EXPECT_EQ(plan.points[0].id, "model-llama_batch-1_prompt-128_stage-prefill");
  EXPECT_EQ(plan.points[1].id, "model-llama_batch-1_prompt-512_stage-decode");
  EXPECT_EQ(plan.points[2].id, "model-llama_batch-8_prompt-128_stage-prefill");
  EXPECT_EQ(plan.points[7].id, "model-qwen_batch-8_prompt-512_stage-decode");
  const sweep::Point& p = plan.points[5];
  EXPECT_EQ(p.index, 5u);
  EXPECT_EQ(p.dir, "/w/runs/model-qwen_batch-1_prompt-512_stage-decode");
  EXPECT_EQ(p.run_dir(), p.dir + "/run");
  EXPECT_EQ(p.command, (std::vector<std::string>{"python3", "w.py", "--model", "qwen", "--batch", "1", "--prompt", "512"}));
  EXPECT_EQ(p.env, (sweep::Pairs{{"HF_HOME", "/scratch/qwen"}}));
  EXPECT_EQ(p.tags, (sweep::Pairs{{"model", "qwen"}, {"batch", "1"}, {"prompt", "512"}, {"stage", "decode"},
                                  {"tokens", "512"}, {"note", "x{literal}"}, {"sweep", "s"},
                                  {"sweep_point", p.id}}));
  EXPECT_EQ(sweep::profile_argv(plan, p, false),
            (std::vector<std::string>{"/opt/kernlens", "profile", "--tier", "quick", "--nvtx-include", "decode", "--out",
                                      p.dir, "--run-id", "run", "--", "python3", "w.py", "--model", "qwen", "--batch",
                                      "1", "--prompt", "512"}));
  auto with_tags = sweep::profile_argv(plan, p, true);
  EXPECT_NE(std::find(with_tags.begin(), with_tags.end(), "sweep_point=" + p.id), with_tags.end());
}

TEST(SweepPlan, PointNameTemplate) {
  // Before the tables: TOML puts a key written after [slurm] into [slurm].
  sweep::Plan plan = plan_of("point_name = \"{model}-b{batch}-{stage}\"\n" + std::string(kSpec), "/w/sweep.toml");
  EXPECT_EQ(plan.points[3].id, "llama-b8-decode");
}

// "[0, 1, ..., n-1]"
std::string list_of(int n) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) out += fmt::format("{}{}", i ? ", " : "", i);
  return out + "]";
}

// `profile --tag` is asked of the kernlens the points run, by its --help.
TEST(SweepPlan, ProfileTagsWhenThatKernlensHasThem) {
  test::TempDir dir;
  auto fake = [&](const std::string& name, const std::string& help) {
    dir.write(name, "#!/bin/sh\n[ \"$1 $2\" = \"profile --help\" ] && echo '" + help + "'\n");
    fs::permissions(dir.file(name), fs::perms::owner_all);
    return dir.file(name);
  };
  EXPECT_TRUE(sweep::profile_takes_tags(fake("new", "  --tag KEY=VALUE   kept in the manifest")));
  EXPECT_FALSE(sweep::profile_takes_tags(fake("old", "  --out TEXT   where run directories go")));
  EXPECT_FALSE(sweep::profile_takes_tags(dir.file("missing")));
}

// Each bad spec names its line (0: no line, the whole file).
struct BadSpec {
  const char* what;
  std::string text;
  std::string error;
};

TEST(SweepSpec, BadSpecsSayWhereAndWhat) {
  const std::string head = "run_root = \"r\"\ncommand = [\"a\", \"{x}\"]\n";
  const BadSpec cases[] = {
      {"unknown top key", head + "comand = [\"a\"]\n[matrix]\nx = [1]\n",
       "/w/sweep.toml:3: unknown key 'comand' (known: name, run_root"},
      {"unknown [slurm] key", head + "[matrix]\nx = [1]\n[slurm]\npartitoin = \"gpu\"\n",
       "/w/sweep.toml:6: unknown key 'partitoin' in [slurm]"},
      {"empty [matrix]", head + "[matrix]\n", "/w/sweep.toml:3: [matrix] is empty"},
      {"no matrix at all", head, "/w/sweep.toml: the matrix is empty"},
      {"an empty list", head + "[matrix]\nx = []\n", "/w/sweep.toml:4: [matrix] x: an empty list"},
      {"a template naming no parameter", "run_root = \"r\"\ncommand = [\"a\",\n  \"--batch={batch}\"]\n[matrix]\nx = [1]\n",
       "/w/sweep.toml:3: \"--batch={batch}\": {batch} names no parameter (parameters: x)"},
      {"a tag naming no parameter", head + "[matrix]\nx = [1]\n[tags]\nmodel = \"{modle}\"\n",
       "/w/sweep.toml:6: \"{modle}\": {modle} names no parameter"},
      {"an unclosed brace", "run_root = \"r\"\ncommand = [\"{x\"]\n[matrix]\nx = [1]\n",
       "/w/sweep.toml:2: \"{x\": '{' is never closed"},
      {"a parameter twice", head + "[matrix]\nx = [1]\n[[zip]]\nx = [2]\n", "/w/sweep.toml:6: parameter 'x' is given twice"},
      {"zips of unequal length", head + "[matrix]\nx = [1]\n[[zip]]\ny = [1, 2]\nz = [1]\n",
       "/w/sweep.toml:7: [[zip]] z: 1 values, but y has 2"},
      {"a wrong type", "run_root = 3\ncommand = [\"a\"]\n[matrix]\nx = [1]\n", "/w/sweep.toml:1: run_root: expected a string"},
      {"a value of a wrong type", head + "[matrix]\nx = [1, [2]]\n",
       "/w/sweep.toml:4: [matrix] x: a value must be a string, number or boolean"},
      {"no command", "run_root = \"r\"\n[matrix]\nx = [1]\n", "/w/sweep.toml: no command"},
      {"no run_root", "command = [\"a\"]\n[matrix]\nx = [1]\n", "/w/sweep.toml: no run_root"},
      {"not TOML", "run_root = \"r\nx = 1\n", "/w/sweep.toml:1: not a TOML file"},
      {"an option sweep sets", "run_root = \"r\"\ncommand = [\"a\"]\nprofile = [\"--tier\", \"quick\",\n \"--out=x\"]\n"
                               "[matrix]\nx = [1]\n",
       "/w/sweep.toml:4: profile: '--out=x' is set by kernlens sweep"},
      {"a batch tag that is not a number", "run_root = \"r\"\ncommand = [\"a\"]\n[matrix]\nbatch = [\"big\"]\n",
       "/w/sweep.toml:4: point batch-big: tag batch=\"big\" must be a whole number"},
      {"two points of one name", "run_root = \"r\"\ncommand = [\"a\"]\npoint_name = \"p\"\n[matrix]\nx = [1, 2]\n",
       "/w/sweep.toml:3: points 1 and 2 are both named \"p\""},
      {"a name that is no directory", "run_root = \"r\"\ncommand = [\"a\"]\npoint_name = \"{x}\"\n[matrix]\nx = [\"a/b\"]\n",
       "/w/sweep.toml:3: point name \"a/b\": use letters"},
      {"too many points", "run_root = \"r\"\ncommand = [\"a\"]\n[matrix]\nx = " + list_of(1000) + "\ny = " + list_of(200) + "\n",
       "/w/sweep.toml:5: the matrix makes more than 100000 points: split the sweep"},
      {"a bad env name", head + "[matrix]\nx = [1]\n[env]\n\"1X\" = \"a\"\n", "/w/sweep.toml:6: [env] '1X'"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(plan_error_of(c.text).rfind(c.error, 0), 0u) << c.what << ": " << plan_error_of(c.text);
  }
}

TEST(SweepSpec, AMissingFileIsAnError) {
  auto spec = sweep::load_spec("/no/such/sweep.toml");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().to_string(), "/no/such/sweep.toml: cannot read the sweep file");
}

TEST(Slurm, ArraySpecsAreRanges) {
  EXPECT_EQ(sweep::array_spec({5, 0, 1, 2, 7, 8}, std::nullopt), "0-2,5,7-8");
  EXPECT_EQ(sweep::array_spec({3}, 2), "3%2");
  EXPECT_EQ(sweep::array_spec({1, 1, 2}, 0), "1-2");
}

// squeue -h -t all -o '%i|%T' on Slurm 22.05 (a 4-task array, 2 at a time, one task failing),
// and sacct -n -P -X -o JobID,State: the same shapes, steps and "CANCELLED by UID".
TEST(Slurm, TaskStatesFromSqueueAndSacct) {
  auto squeue = sweep::parse_task_states("1_[3-4%2]|PENDING\n1_1|RUNNING\n1_2|RUNNING\n");
  EXPECT_EQ(squeue, (sweep::TaskStates{{"1_1", "RUNNING"}, {"1_2", "RUNNING"}, {"1_3", "PENDING"}, {"1_4", "PENDING"}}));
  auto sacct = sweep::parse_task_states(
      "22423095_1|COMPLETED\n22423095_1.batch|COMPLETED\n22423095_0|CANCELLED by 0\n22423095_[5,7-8]|PENDING\n"
      "22423096|FAILED\nnot a line\n22423095_2|TIMEOUT+\n");
  EXPECT_EQ(sacct, (sweep::TaskStates{{"22423095_0", "CANCELLED"}, {"22423095_1", "COMPLETED"},
                                      {"22423095_2", "TIMEOUT"}, {"22423095_5", "PENDING"},
                                      {"22423095_7", "PENDING"}, {"22423095_8", "PENDING"}}));
}

TEST(Slurm, TheScriptRunsEachPointInItsCase) {
  test::TempDir dir;
  sweep::Plan plan = plan_of(kSpec, dir.file("sweep.toml"));
  std::vector<std::size_t> points = {1, 2, 3, 6};
  std::vector<std::vector<std::string>> argvs;
  for (std::size_t i : points) argvs.push_back(sweep::profile_argv(plan, plan.points[i], false));
  auto script = sweep::sbatch_script(plan, points, argvs);
  ASSERT_TRUE(script.ok()) << script.error().to_string();
  for (const std::string& line : std::vector<std::string>{
           "#SBATCH --job-name=kernlens-s\n", "#SBATCH --array=1-3,6%3\n",
        "#SBATCH --output=" + dir.file("runs/_sweep/slurm-%A_%a.out") + "\n", "#SBATCH --partition=gpu\n",
        "#SBATCH --time=00:30:00\n", "#SBATCH --gres=gpu:1\n", "#SBATCH --qos=short\n",
        "source ${HOME}/venv/bin/activate\n", "cd " + dir.path().string() + " || exit 2\n",
        "  6)  # model-qwen_batch-8_prompt-128_stage-prefill\n    exec env HF_HOME=/scratch/qwen /opt/kernlens profile "}) {
    EXPECT_NE(script->find(line), std::string::npos) << line << "\n" << *script;
  }
  EXPECT_EQ(script->find("  0)"), std::string::npos);
  EXPECT_EQ(script->find("  4)"), std::string::npos);
}

TEST(Slurm, ValuesWithSpacesCannotGoIntoSbatchLines) {
  auto spec = parse("run_root = \"r\"\ncommand = [\"a\"]\n[matrix]\nx = [1]\n[slurm]\npartition = \"a b\"\n");
  ASSERT_TRUE(spec.ok());
  auto plan = sweep::make_plan(std::move(spec).value(), "k");
  ASSERT_TRUE(plan.ok());
  auto script = sweep::sbatch_script(*plan, {0}, {{"k"}});
  ASSERT_FALSE(script.ok());
  EXPECT_NE(script.error().message.find("#SBATCH --partition=a b"), std::string::npos);
}

// A plan of 6 points in a temporary run root, and what each point's directory holds.
class SweepStatus : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_ = plan_of("run_root = \"runs\"\ncommand = [\"a\"]\npoint_name = \"p{x}\"\n[matrix]\nx = [0, 1, 2, 3, 4, 5]\n",
                    dir_.file("sweep.toml"));
  }
  void manifest(std::size_t point, const std::string& status, const std::string& reason = "") {
    fs::create_directories(plan_.points[point].run_dir());
    std::ofstream(fs::path(plan_.points[point].run_dir()) / "manifest.json")
        << nlohmann::json{{"schema", "kernlens.manifest/1"}, {"status", status}, {"status_reason", reason}}.dump();
  }
  std::vector<sweep::PointStatus> status(const std::optional<sweep::TaskStates>& slurm) {
    auto submissions = sweep::read_submissions(plan_);
    EXPECT_TRUE(submissions.ok());
    return sweep::sweep_status(plan_, submissions.ok() ? *submissions : std::vector<sweep::Submission>{}, slurm);
  }
  test::TempDir dir_;
  sweep::Plan plan_;
};

TEST_F(SweepStatus, FromManifestsAndSlurm) {
  ASSERT_TRUE(sweep::append_submission(plan_, {"41", {{0, "p0"}, {1, "p1"}, {2, "p2"}, {3, "p3"}, {4, "p4"}}, "s", "", 0}).ok());
  manifest(0, "complete");
  manifest(1, "failed", "discovery (ncu timing mode): exit code 1");
  manifest(2, "running");  // and Slurm says the task timed out
  manifest(3, "running");
  sweep::TaskStates slurm = {{"41_2", "TIMEOUT"}, {"41_3", "RUNNING"}, {"41_4", "PENDING"}};
  auto s = status(slurm);
  using sweep::State;
  EXPECT_EQ(s[0].state, State::kDone);
  EXPECT_EQ(s[1].state, State::kFailed);
  EXPECT_EQ(s[1].detail, "failed: discovery (ncu timing mode): exit code 1");
  EXPECT_EQ(s[1].task, "41_1");
  EXPECT_EQ(s[2].state, State::kFailed);
  EXPECT_EQ(s[2].detail.rfind("the task ended TIMEOUT before its run finished (the manifest says running); see ", 0), 0u)
      << s[2].detail;
  EXPECT_EQ(s[3].state, State::kRunning);
  EXPECT_EQ(s[4].state, State::kQueued);
  EXPECT_EQ(s[5].state, State::kNotStarted);
  EXPECT_EQ(sweep::points_to_run(s), (std::vector<std::size_t>{1, 2, 5}));
}

TEST_F(SweepStatus, ATaskSlurmNoLongerKnowsFailedUnlessSlurmCannotBeAsked) {
  ASSERT_TRUE(sweep::append_submission(plan_, {"7", {{0, "p0"}, {1, "p1"}}, "s", "", 0}).ok());
  manifest(1, "running");
  auto asked = status(sweep::TaskStates{});
  EXPECT_EQ(asked[0].state, sweep::State::kFailed);
  EXPECT_NE(asked[0].detail.find("Slurm no longer knows the task without a run directory"), std::string::npos);
  EXPECT_EQ(asked[1].state, sweep::State::kFailed);
  auto silent = status(std::nullopt);  // squeue and sacct did not answer: nothing is assumed dead
  EXPECT_EQ(silent[0].state, sweep::State::kQueued);
  EXPECT_EQ(silent[1].state, sweep::State::kRunning);
  EXPECT_TRUE(sweep::points_to_run(silent).size() == 4u);  // p2..p5, never submitted
}

TEST_F(SweepStatus, LocalRunsAliveOrGone) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  ASSERT_TRUE(sweep::append_submission(plan_, {"local", {{0, "p0"}, {1, "p1"}}, "", host, getpid()}).ok());
  manifest(0, "running");
  auto alive = status(std::nullopt);
  EXPECT_EQ(alive[0].state, sweep::State::kRunning);
  EXPECT_EQ(alive[1].state, sweep::State::kQueued);
  EXPECT_EQ(alive[1].task, "local");
  ASSERT_TRUE(sweep::append_submission(plan_, {"local", {{0, "p0"}, {1, "p1"}}, "", host, 0}).ok());  // a gone process
  auto gone = status(std::nullopt);
  EXPECT_EQ(gone[0].state, sweep::State::kFailed);
  EXPECT_EQ(gone[1].state, sweep::State::kFailed);
  EXPECT_EQ(gone[1].detail, "kernlens profile ended without a run directory; see " + plan_.points[1].dir +
                                "/local.stderr.log");
  fs::create_directories(plan_.points[1].dir);
  std::ofstream(fs::path(plan_.points[1].dir) / "local.stderr.log") << "starting\nkernlens: error: ncu not found\n\n";
  EXPECT_EQ(status(std::nullopt)[1].detail, "kernlens profile ended without a run directory; see " + plan_.points[1].dir +
                                                "/local.stderr.log: kernlens: error: ncu not found");
}

TEST_F(SweepStatus, ADamagedSubmissionsFileSaysItsLine) {
  fs::create_directories(plan_.sweep_dir());
  std::ofstream(fs::path(plan_.sweep_dir()) / "submissions.jsonl") << "{\"job\":\"1\",\"tasks\":{\"0\":\"p0\"}}\n{oops\n";
  auto s = sweep::read_submissions(plan_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().line, 2);
}

// Two runs of one point and one of another, with known kernels: the views' arithmetic.
model::RunRecord scaling_run(const std::string& key, const std::string& model, std::int64_t batch,
                             std::vector<std::tuple<std::string, double, std::optional<double>, std::optional<double>>> kernels) {
  model::RunRecord r;
  r.meta.run_key = key;
  r.meta.model = model;
  r.meta.batch = batch;
  r.meta.tokens = 128;
  r.meta.gpu = "H100";
  double total = 0;
  for (auto& [op, ns, sm, mem] : kernels) {
    model::RunKernel k;
    k.name = k.base_name = op + "_kernel";
    k.library = "cublas";
    k.op_class = op;
    k.launches = 2;
    k.total_ns = ns;
    k.sm_pct = sm;
    k.memory_pct = mem;
    total += ns;
    r.kernels.push_back(k);
  }
  r.kernel_time_ns = total;
  return r;
}

TEST(ScalingViews, ShareAndSolPerPoint) {
  test::TempDir dir;
  auto db = store::open_for_writing(dir.file("runs.db"));
  ASSERT_TRUE(db.ok()) << db.error().to_string();
  for (const auto& run : {scaling_run("a1", "llama", 1, {{"gemm", 300, 80.0, 40.0}, {"norm", 100, 10.0, 60.0}}),
                          scaling_run("a2", "llama", 1, {{"gemm", 100, 40.0, std::nullopt}, {"copy", 100, {}, {}}}),
                          scaling_run("b1", "qwen", 4, {{"gemm", 50, {}, {}}})}) {
    ASSERT_TRUE(store::ingest_run(*db, run).ok());
  }
  auto across = store::load_cross_model(*db, 10);
  ASSERT_TRUE(across.ok()) << across.error().to_string();
  EXPECT_EQ(across->runs, 3);
  EXPECT_EQ(across->models, (std::vector<std::string>{"llama", "qwen"}));
  ASSERT_EQ(across->op_classes.size(), 4u);  // copy, gemm x2, norm: ordered by class, then point
  const auto& gemm = across->op_classes[1];
  EXPECT_EQ(gemm.op_class, "gemm");
  EXPECT_EQ(gemm.model, "llama");
  EXPECT_EQ(gemm.runs, 2);
  EXPECT_DOUBLE_EQ(*gemm.share_of_time, 400.0 / 600.0);  // both runs' kernel time, the one without norm too
  EXPECT_DOUBLE_EQ(*gemm.time_ns_per_run, 200);
  EXPECT_DOUBLE_EQ(*gemm.sol_pct, (80.0 * 300 + 40.0 * 100) / 400);  // max(SM, memory), time-weighted
  EXPECT_DOUBLE_EQ(*gemm.measured_share, 1.0);
  const auto& norm = across->op_classes[3];
  EXPECT_DOUBLE_EQ(*norm.share_of_time, 100.0 / 600.0);
  EXPECT_DOUBLE_EQ(*norm.sol_pct, 60.0);
  const auto& copy = across->op_classes[0];
  EXPECT_FALSE(copy.sol_pct.has_value());  // not measured: absent, never 0
  EXPECT_FALSE(copy.measured_share.has_value());
  const auto& qwen = across->op_classes[2];
  EXPECT_EQ(qwen.model, "qwen");
  EXPECT_DOUBLE_EQ(*qwen.share_of_time, 1.0);
  ASSERT_EQ(across->families.size(), 4u);  // gemm_kernel first (the most time), at both points
  EXPECT_EQ(across->families[0].base_name, "gemm_kernel");
  EXPECT_EQ(across->families[1].base_name, "gemm_kernel");
}

store::Table view_rows(const std::string& path, const std::string& view) {
  auto db = store::open_for_reading(path);
  EXPECT_TRUE(db.ok()) << (db.ok() ? "" : db.error().to_string());
  auto t = store::run_query(*db, "SELECT * FROM " + view);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return t.ok() ? std::move(t).value() : store::Table{};
}

// Ingest's running sums give what the migration's grouping of every kernel gives: the views
// before and after dropping the sums and migrating again (which groups the kernels) agree.
TEST(ScalingViews, IngestSumsEqualGroupingTheKernels) {
  test::TempDir dir;
  const std::string path = dir.file("runs.db");
  {
    auto db = store::open_for_writing(path);
    ASSERT_TRUE(db.ok());
    for (std::uint64_t seed = 0; seed < 24; ++seed) {  // seeds 20 apart share a model and batch: one point
      model::RunRecord run = test::synthetic_run(seed, 80);
      run.meta.gpu = seed % 3 ? "H100" : "";
      run.kernels[seed % 7].memory_pct = 55.0 + static_cast<double>(seed);
      run.kernels[1].flops = 1e9 * static_cast<double>(seed + 1);
      ASSERT_TRUE(store::ingest_run(*db, run).ok());
    }
  }
  const std::vector<std::string> views = {"v_op_class_scaling", "v_family_scaling"};
  std::vector<store::Table> kept;
  for (const auto& v : views) kept.push_back(view_rows(path, v));
  {
    auto raw = SqliteDb::open_writable(path, 1000);
    ASSERT_TRUE(raw.ok());
    // Back to schema 2: migration 3's sums and views, and what came after them (4: ranks).
    ASSERT_TRUE(raw->exec("DROP VIEW v_op_class_scaling; DROP VIEW v_family_scaling; DROP TABLE scaling_cells; "
                          "DROP TABLE scaling_points; DROP VIEW v_ranks; DROP VIEW v_rank_stages; "
                          "DROP TABLE run_rank_stages; DROP TABLE run_ranks; "
                          "DELETE FROM schema_migrations WHERE version >= 3; PRAGMA user_version = 2")
                    .ok());
  }
  ASSERT_TRUE(store::open_for_writing(path).ok());  // migration 3 again: the sums from the kernels
  for (std::size_t v = 0; v < views.size(); ++v) {
    store::Table grouped = view_rows(path, views[v]);
    ASSERT_EQ(grouped.rows.size(), kept[v].rows.size()) << views[v];
    ASSERT_GT(grouped.rows.size(), 10u);
    for (std::size_t r = 0; r < grouped.rows.size(); ++r) {
      for (std::size_t c = 0; c < grouped.columns.size(); ++c) {
        const auto& a = kept[v].rows[r][c];
        const auto& b = grouped.rows[r][c];
        if (std::holds_alternative<double>(a) && std::holds_alternative<double>(b)) {
          EXPECT_NEAR(std::get<double>(a), std::get<double>(b), 1e-9 * std::abs(std::get<double>(b)))
              << views[v] << " row " << r << " " << grouped.columns[c];
        } else {
          EXPECT_EQ(a, b) << views[v] << " row " << r << " " << grouped.columns[c];
        }
      }
    }
  }
}

TEST(ScalingViews, PointKeysAreSqlitesQuote) {
  test::TempDir dir;
  auto db = store::open_for_writing(dir.file("k.db"));
  ASSERT_TRUE(db.ok());
  model::RunMeta meta;
  meta.gpu = "it's";
  meta.model = "llama";
  meta.batch = 8;
  auto t = store::run_query(*db, "SELECT quote('it''s') || '|' || quote(NULL) || '|' || quote('llama') || '|' || "
                                 "quote(8) || '|' || quote(NULL)");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(store::point_key(meta), std::get<std::string>(t->rows[0][0]));
}

TEST(CrossModelReport, SmallMultiplesPerOpClass) {
  model::CrossModel across;
  across.runs = 4;
  across.models = {"llama", "qwen"};
  for (const char* m : {"llama", "qwen"}) {
    for (std::int64_t b : {1, 8}) {
      model::ScalingCell c;
      c.model = m;
      c.batch = b;
      c.tokens = 128;
      c.op_class = "gemm";
      c.runs = 1;
      c.time_ns_per_run = 1000;
      c.share_of_time = 0.4;
      c.sol_pct = b == 1 ? 30.0 : 70.0;
      across.op_classes.push_back(c);
      c.op_class = "copy";
      c.sol_pct.reset();
      across.op_classes.push_back(c);
    }
  }
  std::string sol = report::scaling_chart(across, report::ScalingFigure::kSol);
  EXPECT_NE(sol.find("<svg id=\"scaling-sol\""), std::string::npos);
  EXPECT_EQ(count_of(sol, "<circle"), 4u);          // gemm: 2 models x 2 batches; copy has no SOL
  EXPECT_EQ(count_of(sol, "class=\"series l"), 4u);  // 2 legend lines, 2 lines between points
  EXPECT_NE(sol.find("not measured"), std::string::npos);
  EXPECT_NE(sol.find("llama · batch 8 · gemm\nSOL 70.0%"), std::string::npos);
  std::string share = report::scaling_chart(across, report::ScalingFigure::kShare);
  EXPECT_EQ(count_of(share, "<circle"), 8u);
  std::string page = report::cross_model_html(across, "runs.db");
  for (const char* part : {"scaling-sol", "scaling-share", "id=\"op-class-scaling\"", "<title>kernlens: across models"}) {
    EXPECT_NE(page.find(part), std::string::npos) << part;
  }
  EXPECT_NE(report::cross_model_html(model::CrossModel{}, "e.db").find("No runs with a batch size"), std::string::npos);
}

}  // namespace
}  // namespace kernlens
