#include "kernlens/store/schema.h"

#include <array>

namespace kernlens::store {
namespace {

constexpr std::string_view kTablesSql = R"sql(
CREATE TABLE schema_migrations (
  version INTEGER PRIMARY KEY,
  description TEXT NOT NULL,
  applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE TABLE devices (
  device_id INTEGER PRIMARY KEY,
  device_key TEXT NOT NULL UNIQUE,
  name TEXT, cc TEXT, sm_count INTEGER, memory_total_bytes INTEGER, l2_cache_bytes INTEGER
);
CREATE TABLE runs (
  run_id INTEGER PRIMARY KEY,
  run_key TEXT NOT NULL UNIQUE,
  ingested_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  source_path TEXT, source_format TEXT, command TEXT,
  model TEXT, dtype TEXT, batch INTEGER, tokens INTEGER,
  gpu TEXT, driver TEXT, cuda_version TEXT, ncu_version TEXT, nsys_version TEXT,
  torch_version TEXT, kernlens_version TEXT,
  device_id INTEGER REFERENCES devices(device_id),
  kernel_time_ns REAL, launches INTEGER NOT NULL, unique_kernels INTEGER NOT NULL
);
CREATE TABLE run_tags (
  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE TABLE kernels (
  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  kernel_idx INTEGER NOT NULL,
  name TEXT NOT NULL, base_name TEXT NOT NULL, library TEXT NOT NULL, op_class TEXT NOT NULL,
  grid TEXT, block TEXT,
  launches INTEGER NOT NULL, total_ns REAL, mean_ns REAL, share REAL,
  sm_pct REAL, memory_pct REAL, dram_pct REAL, l1_hit_pct REAL, l2_hit_pct REAL,
  achieved_occupancy_pct REAL, theoretical_occupancy_pct REAL, tensor_pipe_pct REAL,
  flops REAL, dram_bytes REAL, arithmetic_intensity REAL, achieved_flops_per_s REAL,
  peak_flops_per_s REAL, peak_dram_bytes_per_s REAL,
  occupancy_limiter TEXT, bottleneck TEXT NOT NULL, bottleneck_reason TEXT,
  PRIMARY KEY (run_id, kernel_idx)
);
CREATE TABLE stages (
  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  stage_idx INTEGER NOT NULL,
  name TEXT NOT NULL, depth INTEGER NOT NULL, launches INTEGER NOT NULL,
  kernel_time_ns REAL, wall_ns REAL, busy_fraction REAL, gap_count INTEGER, gap_total_ns REAL,
  flops REAL, mfu REAL,
  PRIMARY KEY (run_id, stage_idx)
);
-- The popularity view's totals, kept by ingest in the run's transaction (store/run_rows.cpp):
-- a family's row is updated once per run, where an index on the kernels' family would take a
-- write to a random page for every kernel of every run (three times the ingest time).
CREATE TABLE family_totals (
  base_name TEXT NOT NULL, library TEXT NOT NULL, op_class TEXT NOT NULL,
  occurrences INTEGER NOT NULL, runs INTEGER NOT NULL, launches INTEGER NOT NULL, total_ns REAL,
  PRIMARY KEY (base_name, library, op_class)
) WITHOUT ROWID;
-- Runs per family and model (the run key for a run without a model).
CREATE TABLE family_models (
  base_name TEXT NOT NULL, library TEXT NOT NULL, op_class TEXT NOT NULL, model_key TEXT NOT NULL,
  runs INTEGER NOT NULL,
  PRIMARY KEY (base_name, library, op_class, model_key)
) WITHOUT ROWID;
CREATE INDEX kernels_op_class ON kernels (op_class);
CREATE INDEX runs_model ON runs (model);
CREATE INDEX run_tags_key ON run_tags (key, value);
)sql";

// Figures weighted by the time of the kernels that measured them, as analyze averages them.
#define KERNLENS_WEIGHTED(col) \
  "SUM(k." #col " * k.total_ns) / SUM(CASE WHEN k." #col " IS NOT NULL THEN k.total_ns END) AS " #col

#define KERNLENS_PERFORMANCE_COLUMNS                                                            \
  "COUNT(*) AS occurrences, COUNT(DISTINCT k.run_id) AS runs, SUM(k.launches) AS launches, "    \
  "SUM(k.total_ns) AS total_ns, " KERNLENS_WEIGHTED(sm_pct) ", " KERNLENS_WEIGHTED(dram_pct)    \
  ", " KERNLENS_WEIGHTED(l2_hit_pct) ", " KERNLENS_WEIGHTED(achieved_occupancy_pct) ", "        \
  KERNLENS_WEIGHTED(theoretical_occupancy_pct) ", "                                             \
  "SUM(k.bottleneck = 'compute') AS compute_bound, SUM(k.bottleneck = 'memory') AS memory_bound, " \
  "SUM(k.bottleneck = 'latency') AS latency_bound, SUM(k.bottleneck = 'launch') AS launch_bound, " \
  "SUM(k.bottleneck = 'cache') AS cache_bound, SUM(k.bottleneck = 'mixed') AS mixed, "          \
  "SUM(k.bottleneck = 'unknown') AS unknown "

constexpr std::string_view kViewsSql =
    // The same as grouping kernels by family (store_test checks it), from the totals ingest keeps.
    "CREATE VIEW v_kernel_popularity AS "
    "SELECT f.base_name, f.library, f.op_class, f.occurrences, f.runs, "
    "(SELECT COUNT(*) FROM family_models m WHERE m.base_name = f.base_name AND m.library = f.library "
    "AND m.op_class = f.op_class) AS models, f.launches, f.total_ns, "
    "f.total_ns / (SELECT SUM(kernel_time_ns) FROM runs) AS share_of_time "
    "FROM family_totals f ORDER BY runs DESC, total_ns DESC;\n"

    "CREATE VIEW v_family_performance AS "
    "SELECT k.base_name, k.library, k.op_class, " KERNLENS_PERFORMANCE_COLUMNS
    "FROM kernels k GROUP BY k.base_name, k.library, k.op_class ORDER BY total_ns DESC;\n"

    "CREATE VIEW v_op_class_performance AS "
    "SELECT k.op_class, " KERNLENS_PERFORMANCE_COLUMNS
    "FROM kernels k GROUP BY k.op_class ORDER BY total_ns DESC;\n"

    // Thresholds: L2 hit under 50%, GEMMs under half their roof, occupancy under 50% or under
    // half the theoretical, stages whose GPU is busy under half their wall time.
    "CREATE VIEW v_signals AS "
    "SELECT 'memory_bound_low_l2_hit' AS signal, r.run_key, r.model, k.name AS subject, "
    "k.base_name, k.op_class, k.total_ns AS time_ns, k.l2_hit_pct AS value, "
    "printf('memory-bound, L2 hit %.1f%%, DRAM %.1f%% of peak', k.l2_hit_pct, k.dram_pct) AS detail "
    "FROM kernels k JOIN runs r ON r.run_id = k.run_id "
    "WHERE k.bottleneck = 'memory' AND k.l2_hit_pct < 50 "
    "UNION ALL "
    "SELECT 'gemm_far_from_tensor_roof', r.run_key, r.model, k.name, k.base_name, k.op_class, "
    "k.total_ns, k.achieved_flops_per_s / k.peak_flops_per_s, "
    "printf('%.1f%% of the compute roof (%.1f of %.1f TFLOP/s), tensor pipe %.1f%%', "
    "100.0 * k.achieved_flops_per_s / k.peak_flops_per_s, k.achieved_flops_per_s / 1e12, "
    "k.peak_flops_per_s / 1e12, k.tensor_pipe_pct) "
    "FROM kernels k JOIN runs r ON r.run_id = k.run_id "
    "WHERE k.op_class = 'gemm' AND k.peak_flops_per_s > 0 "
    "AND k.achieved_flops_per_s < 0.5 * k.peak_flops_per_s "
    "UNION ALL "
    "SELECT 'occupancy_limited', r.run_key, r.model, k.name, k.base_name, k.op_class, k.total_ns, "
    "k.achieved_occupancy_pct, printf('occupancy %s of theoretical %.1f%%, limited by %s', "
    "COALESCE(printf('%.1f%%', k.achieved_occupancy_pct), 'not measured'), k.theoretical_occupancy_pct, "
    "COALESCE(NULLIF(k.occupancy_limiter, ''), 'an unknown limiter')) "
    "FROM kernels k JOIN runs r ON r.run_id = k.run_id "
    "WHERE k.theoretical_occupancy_pct < 50 OR k.achieved_occupancy_pct < 0.5 * k.theoretical_occupancy_pct "
    "UNION ALL "
    "SELECT 'launch_bound_stage', r.run_key, r.model, s.name, NULL, NULL, s.wall_ns, s.busy_fraction, "
    "printf('GPU busy %.1f%% of the stage''s wall time, %d idle gaps', 100.0 * s.busy_fraction, "
    "s.gap_count) "
    "FROM stages s JOIN runs r ON r.run_id = s.run_id WHERE s.busy_fraction < 0.5;\n"

    "CREATE VIEW v_signal_summary AS "
    "SELECT signal, COALESCE(base_name, subject) AS family, COUNT(*) AS occurrences, "
    "COUNT(DISTINCT run_key) AS runs, COUNT(DISTINCT COALESCE(model, run_key)) AS models, "
    "SUM(time_ns) AS time_ns, MIN(detail) AS example "
    "FROM v_signals GROUP BY signal, family ORDER BY signal, time_ns DESC;\n";

#undef KERNLENS_PERFORMANCE_COLUMNS
#undef KERNLENS_WEIGHTED

// The cross-model views (a sweep's runs): per point (GPU, dtype, model, batch and tokens) and
// per operation class or kernel family, the share of the point's kernel time and how close to
// the GPU's limits the measured kernels ran. SOL is ncu's "speed of light": the larger of the
// SM and the memory throughput, in percent of peak, weighted by the kernels' time.
//
// Like the popularity totals, ingest keeps the sums the views divide (store/scaling_rows.cpp),
// one row per point and family updated per run, so that the views read a few rows per point
// instead of grouping every kernel; a store test checks they equal grouping the kernels, which
// is what the migration does for the runs already in a database (KERNLENS_KERNEL_SUMS).
// A point's key is SQLite's quote() of its five values joined by '|' (NULL is not '').
#define KERNLENS_POINT_KEY(r) \
  "quote(" #r ".gpu) || '|' || quote(" #r ".dtype) || '|' || quote(" #r ".model) || '|' || quote(" #r \
  ".batch) || '|' || quote(" #r ".tokens)"
#define KERNLENS_SOL "(CASE WHEN k.sm_pct IS NULL THEN k.memory_pct WHEN k.memory_pct IS NULL THEN k.sm_pct " \
  "ELSE MAX(k.sm_pct, k.memory_pct) END)"
// The time of the kernels where `x` is known, and x weighted by it.
#define KERNLENS_TIMED(x) \
  "SUM(CASE WHEN " x " IS NOT NULL THEN k.total_ns END), SUM(" x " * k.total_ns)"
#define KERNLENS_KERNEL_SUMS                                                                                  \
  "SUM(k.launches), SUM(k.total_ns), " KERNLENS_TIMED(KERNLENS_SOL) ", " KERNLENS_TIMED("k.sm_pct") ", "        \
  KERNLENS_TIMED("k.memory_pct") ", SUM(k.flops), SUM(CASE WHEN k.flops IS NOT NULL THEN k.total_ns END), "   \
  "SUM(k.dram_bytes), SUM(CASE WHEN k.dram_bytes IS NOT NULL THEN k.total_ns END)"
// Per-second rates and time-weighted percentages from the sums of a cells' group (`c`).
#define KERNLENS_SCALING_FIGURES                                                                              \
  "p.runs, SUM(c.launches) AS launches, SUM(c.total_ns) / p.runs AS time_ns_per_run, "                        \
  "SUM(c.total_ns) / p.kernel_time_ns AS share_of_time, SUM(c.sol_weighted) / SUM(c.sol_ns) AS sol_pct, "      \
  "SUM(c.sm_weighted) / SUM(c.sm_ns) AS sm_pct, SUM(c.memory_weighted) / SUM(c.memory_ns) AS memory_pct, "     \
  "SUM(c.flops) * 1e9 / SUM(c.flops_ns) AS flops_per_s, SUM(c.dram_bytes) * 1e9 / SUM(c.dram_ns) "            \
  "AS dram_bytes_per_s, SUM(c.sol_ns) / SUM(c.total_ns) AS measured_share "
#define KERNLENS_SCALING_VIEW(view, columns)                                                                  \
  "CREATE VIEW " view " AS SELECT p.gpu, p.dtype, p.model, p.batch, p.tokens, " columns ", "                  \
  KERNLENS_SCALING_FIGURES "FROM scaling_cells c JOIN scaling_points p ON p.point_key = c.point_key "          \
  "GROUP BY c.point_key, " columns " ORDER BY " columns ", p.gpu, p.dtype, p.model, p.batch, p.tokens;\n"

constexpr std::string_view kScalingSql =
    "CREATE TABLE scaling_points (\n"
    "  point_key TEXT PRIMARY KEY, gpu TEXT, dtype TEXT, model TEXT, batch INTEGER, tokens INTEGER,\n"
    "  runs INTEGER NOT NULL, kernel_time_ns REAL\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE scaling_cells (\n"
    "  point_key TEXT NOT NULL, base_name TEXT NOT NULL, library TEXT NOT NULL, op_class TEXT NOT NULL,\n"
    "  launches INTEGER NOT NULL, total_ns REAL, sol_ns REAL, sol_weighted REAL, sm_ns REAL, sm_weighted REAL,\n"
    "  memory_ns REAL, memory_weighted REAL, flops REAL, flops_ns REAL, dram_bytes REAL, dram_ns REAL,\n"
    "  PRIMARY KEY (point_key, base_name, library, op_class)\n"
    ") WITHOUT ROWID;\n"
    "INSERT INTO scaling_points SELECT " KERNLENS_POINT_KEY(runs) ", gpu, dtype, model, batch, tokens, COUNT(*), "
    "SUM(kernel_time_ns) FROM runs GROUP BY 1;\n"
    "INSERT INTO scaling_cells SELECT " KERNLENS_POINT_KEY(r) ", k.base_name, k.library, k.op_class, "
    KERNLENS_KERNEL_SUMS " FROM kernels k JOIN runs r ON r.run_id = k.run_id GROUP BY 1, 2, 3, 4;\n"
    KERNLENS_SCALING_VIEW("v_op_class_scaling", "c.op_class")
    KERNLENS_SCALING_VIEW("v_family_scaling", "c.base_name, c.library, c.op_class");

#undef KERNLENS_SCALING_VIEW
#undef KERNLENS_SCALING_FIGURES
#undef KERNLENS_KERNEL_SUMS
#undef KERNLENS_TIMED
#undef KERNLENS_SOL
#undef KERNLENS_POINT_KEY

// Multi-rank runs (issue 17): one row per rank of a run of several ranks (analysis/ranks.h;
// none for a run of one rank), its stage rows, and a view per run and rank that says how far
// each rank is from the run's fastest, so ranks compare across runs. Times in ns; role is
// "straggler", "waiting" or "-".
constexpr std::string_view kRanksSql =
    "CREATE TABLE run_ranks (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "  rank INTEGER NOT NULL, input TEXT, launches INTEGER NOT NULL, kernel_time_ns REAL NOT NULL,\n"
    "  busy_ns REAL, wall_ns REAL, comm_ns REAL NOT NULL, exposed_comm_ns REAL NOT NULL, role TEXT NOT NULL,\n"
    "  PRIMARY KEY (run_id, rank)\n"
    ");\n"
    "CREATE TABLE run_rank_stages (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
    "  rank INTEGER NOT NULL, stage_idx INTEGER NOT NULL, name TEXT NOT NULL,\n"
    "  kernel_time_ns REAL NOT NULL, wall_ns REAL, comm_ns REAL NOT NULL, exposed_comm_ns REAL NOT NULL,\n"
    "  PRIMARY KEY (run_id, rank, stage_idx)\n"
    ");\n"
    "CREATE VIEW v_ranks AS "
    "SELECT r.run_key, r.model, r.gpu, k.rank, k.launches, k.kernel_time_ns, k.comm_ns, k.exposed_comm_ns, "
    "k.exposed_comm_ns / NULLIF(k.comm_ns, 0) AS exposed_share, k.busy_ns, k.wall_ns, k.role, "
    "k.role = 'straggler' AS straggler, "
    "k.kernel_time_ns - MIN(k.kernel_time_ns) OVER (PARTITION BY k.run_id) AS over_fastest_ns, k.input "
    "FROM run_ranks k JOIN runs r ON r.run_id = k.run_id ORDER BY r.run_id, k.rank;\n"
    "CREATE VIEW v_rank_stages AS "
    "SELECT r.run_key, r.model, s.rank, s.name AS stage, s.kernel_time_ns, s.wall_ns, s.comm_ns, s.exposed_comm_ns "
    "FROM run_rank_stages s JOIN runs r ON r.run_id = s.run_id ORDER BY r.run_id, s.rank, s.stage_idx;\n";

constexpr std::array kMigrations = {
    Migration{1, "runs, run_tags, devices, kernels, stages, family totals and their indexes", kTablesSql},
    Migration{2, "views: popularity, performance by family and op class, signals", kViewsSql},
    Migration{3, "scaling sums per point and family, views: op class and family scaling across models", kScalingSql},
    Migration{4, "ranks of multi-rank runs and their stages, views: ranks and rank stages", kRanksSql},
};

constexpr std::array<std::string_view, 12> kTables = {"schema_migrations", "devices",        "runs",
                                                      "run_tags",          "kernels",        "stages",
                                                      "family_totals",     "family_models",  "scaling_points",
                                                      "scaling_cells",     "run_ranks",      "run_rank_stages"};

}  // namespace

std::span<const Migration> migrations() {
  return kMigrations;
}

int schema_version() {
  return kMigrations.back().version;
}

std::span<const std::string_view> schema_tables() {
  return kTables;
}

}  // namespace kernlens::store
