// The run database's schema as data: a list of migrations, each a version and the SQL that
// takes the schema from the version before to it. The version a file is at is its
// `PRAGMA user_version`; schema_migrations records when each was applied.
//
//   runs        one row per ingested run: run_key (unique), metadata columns, totals
//   run_tags    run_id, key, value: every --tag and what the workload's arguments said
//   devices     one row per distinct GPU (name, cc, SMs, memory)
//   kernels     run_id, one row per kernel: names, classification, shape, time, figures,
//               bottleneck
//   stages      run_id, one row per stage: time, wall time, busy fraction, gaps, FLOPs, MFU
//   run_ranks, run_rank_stages   run_id, rank: per rank of a multi-rank run its kernel time,
//               communication, exposed communication, role; and per stage of it
//   family_totals, family_models   per kernel family: kernel rows, runs, launches, time, and
//               runs per model, kept by ingest for the popularity view
//   views       v_kernel_popularity, v_family_performance, v_op_class_performance,
//               v_signals, v_signal_summary (docs/user-guide.md, "Database and compare"),
//               v_op_class_scaling, v_family_scaling (the same guide, "Sweeps"), v_ranks,
//               v_rank_stages
#pragma once

#include <span>
#include <string_view>

namespace kernlens::store {

struct Migration {
  int version;
  std::string_view description;
  std::string_view sql;
};

// In order of version, from 1.
std::span<const Migration> migrations();

// The version this kernlens writes: the last migration's.
int schema_version();

// The tables kernlens creates (a database holding others was not made by kernlens).
std::span<const std::string_view> schema_tables();

}  // namespace kernlens::store
