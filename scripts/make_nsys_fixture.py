#!/usr/bin/env python3
"""Writes Nsight Systems SQLite exports for tests and benchmarks, on a machine without nsys.

The tables follow, column for column, the export schema NVIDIA documents in the Nsight
Systems Post-Collection Analysis Guide, "SQLite Schema Reference" (schema 3.28.1,
https://docs.nvidia.com/nsight-systems/AnalysisGuide/index.html#sqlite-schema-reference):
META_DATA_EXPORT, StringIds, TARGET_INFO_GPU, TARGET_INFO_CUDA_DEVICE, ENUM_NSYS_EVENT_TYPE,
ENUM_CUDA_MEM_KIND, CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_MEMSET,
CUPTI_ACTIVITY_KIND_RUNTIME and NVTX_EVENTS. Like nsys, it creates only the tables it fills
(a trace without memory copies gets no CUPTI_ACTIVITY_KIND_MEMCPY).

    make_nsys_fixture.py trace TRACE.json.gz -o OUT.sqlite
        The kernels, memsets, CUDA runtime/driver calls and record_function ranges of a
        PyTorch profiler (Kineto) trace, as nsys would have recorded the same run: real
        names, timings, launch configurations and correlation ids in nsys's format.

    make_nsys_fixture.py bench --template FIXTURE.sqlite --launches N -o OUT.sqlite
        A large synthetic export for benchmarks: the template's kernels repeated to N
        launches, one launch call each, under NVTX ranges generate > prefill|decode > layer_NN
        (the layer ranges in a named domain).

    make_nsys_fixture.py seed EXPORT.sqlite --rows N -o OUT.sqlite
        A fuzzing seed: the tables kernlens reads, their first N rows (StringIds: the strings
        those rows name), in 512-byte pages, so that the file stays under libFuzzer's -max_len.

What a Kineto trace does not hold is written as documented defaults; see
tests/fixtures/nsys/README.md for the list.
"""
import argparse
import gzip
import json
import os
import re
import sqlite3
import sys
from decimal import Decimal

SCHEMA_VERSION = (3, 28, 1)

# Column lists as documented for schema 3.28.1 (types and NOT NULL / PRIMARY KEY kept).
TABLES = {
    "StringIds": """
        id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL""",
    "META_DATA_EXPORT": """
        name TEXT NOT NULL, value TEXT""",
    "TARGET_INFO_GPU": """
        vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, isDiscrete INTEGER,
        l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
        smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER,
        ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER, nodeMask INTEGER,
        constantMemory INTEGER, maxIPC INTEGER, maxRegistersPerBlock INTEGER,
        maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER,
        maxRegistersPerSm INTEGER, threadsPerWarp INTEGER, asyncEngines INTEGER,
        maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER, maxThreadsPerBlock INTEGER,
        maxBlockDimX INTEGER, maxBlockDimY INTEGER, maxBlockDimZ INTEGER, maxGridDimX INTEGER,
        maxGridDimY INTEGER, maxGridDimZ INTEGER, computeMajor INTEGER, computeMinor INTEGER,
        smMajor INTEGER, smMinor INTEGER, numaNodeId INTEGER""",
    "TARGET_INFO_CUDA_DEVICE": """
        gpuId INTEGER, cudaId INTEGER NOT NULL, pid INTEGER NOT NULL, uuid TEXT,
        numMultiprocessors INTEGER""",
    "ENUM_NSYS_EVENT_TYPE": """
        id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT""",
    "ENUM_CUDA_MEM_KIND": """
        id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT""",
    "CUPTI_ACTIVITY_KIND_MEMSET": """
        start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
        contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
        correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
        graphNodeId INTEGER, memKind INTEGER""",
    "CUPTI_ACTIVITY_KIND_KERNEL": """
        start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
        contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
        correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
        shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
        registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
        gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
        blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
        dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
        localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER,
        graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER, qmdBulkReleaseDone INTEGER,
        qmdPreexitDone INTEGER, qmdLastCtaDone INTEGER, graphId INTEGER, clusterX INTEGER,
        clusterY INTEGER, clusterZ INTEGER, clusterSchedulingPolicy INTEGER,
        maxPotentialClusterSize INTEGER, maxActiveClusters INTEGER,
        sharedMemoryRequestedPercentage INTEGER, tensorSizeMinusOneElements TEXT NOT NULL""",
    "CUPTI_ACTIVITY_KIND_RUNTIME": """
        start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
        globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
        returnValue INTEGER NOT NULL, callchainId INTEGER""",
    "NVTX_EVENTS": """
        start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
        category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
        textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER,
        doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL,
        jsonTextId INTEGER, jsonText TEXT, binaryData TEXT,
        eventId INTEGER NOT NULL PRIMARY KEY""",
}

# NVTX event types as nsys numbers them (its report scripts use these values) and names them
# in ENUM_NSYS_EVENT_TYPE. Labels are left empty: nothing reads them.
NVTX_PUSH_POP, NVTX_START_END, NVTX_DOMAIN_CREATE = 59, 60, 75
EVENT_TYPES = [(NVTX_PUSH_POP, "NvtxPushPopRange"), (NVTX_START_END, "NvtxStartEndRange"),
               (NVTX_DOMAIN_CREATE, "NvtxDomainCreate")]

# The serialized ids nsys writes: the process id in bits 24-47 over a session bit at 48 (as in
# real exports), the thread id in bits 0-23.
def global_pid(pid):
    return (1 << 48) | (pid << 24)


def global_tid(pid, tid):
    return global_pid(pid) | tid


KERNEL_COLUMNS = ["start", "end", "deviceId", "contextId", "streamId", "correlationId",
                  "globalPid", "demangledName", "shortName", "registersPerThread", "gridX", "gridY",
                  "gridZ", "blockX", "blockY", "blockZ", "staticSharedMemory",
                  "dynamicSharedMemory", "localMemoryPerThread", "localMemoryTotal", "gridId",
                  "tensorSizeMinusOneElements"]


class Export:
    """An export being written: the tables, and StringIds interned as rows are added."""

    def __init__(self, path, product):
        if os.path.exists(path):
            os.remove(path)
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA journal_mode = OFF")
        self.db.execute("PRAGMA synchronous = OFF")
        self.strings = {}
        self.product = product

    def create(self, *tables):
        for t in tables:
            self.db.execute(f"CREATE TABLE {t} ({TABLES[t]})")

    def string(self, value):
        if value not in self.strings:
            self.strings[value] = len(self.strings)
        return self.strings[value]

    def insert(self, table, columns, rows):
        marks = ", ".join("?" * len(columns))
        self.db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)

    def finish(self, source):
        major, minor, micro = SCHEMA_VERSION
        meta = [("EXPORT_PRODUCT_NAME", self.product),
                ("EXPORT_SCHEMA_VERSION", f"{major}.{minor}.{micro}"),
                ("EXPORT_SCHEMA_VERSION_MAJOR", str(major)),
                ("EXPORT_SCHEMA_VERSION_MINOR", str(minor)),
                ("EXPORT_SCHEMA_VERSION_MICRO", str(micro)),
                ("EXPORT_INPUT_FILE", source)]
        self.create("META_DATA_EXPORT", "StringIds", "ENUM_NSYS_EVENT_TYPE")
        self.insert("META_DATA_EXPORT", ["name", "value"], meta)
        self.insert("StringIds", ["id", "value"], [(i, s) for s, i in self.strings.items()])
        self.insert("ENUM_NSYS_EVENT_TYPE", ["id", "name"], EVENT_TYPES)
        self.db.commit()
        self.db.execute("VACUUM")
        self.db.close()

    def write_gpu(self, device, pid):
        self.create("TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE")
        warp = device["warpSize"]
        self.insert("TARGET_INFO_GPU",
                    ["vmId", "id", "name", "totalMemory", "smCount", "cuDevice",
                     "maxRegistersPerBlock", "maxShmemPerBlock", "maxShmemPerBlockOptin",
                     "maxShmemPerSm", "maxRegistersPerSm", "threadsPerWarp", "maxWarpsPerSm",
                     "maxThreadsPerBlock", "computeMajor", "computeMinor"],
                    [(1 << 48, device["id"], device["name"], device["totalGlobalMem"],
                      device["numSms"], device["id"], device["regsPerBlock"],
                      device["sharedMemPerBlock"], device["sharedMemPerBlockOptin"],
                      device["sharedMemPerMultiprocessor"], device["regsPerMultiprocessor"], warp,
                      device["maxThreadsPerMultiprocessor"] // warp, device["maxThreadsPerBlock"],
                      device["computeMajor"], device["computeMinor"])])
        self.insert("TARGET_INFO_CUDA_DEVICE", ["gpuId", "cudaId", "pid", "numMultiprocessors"],
                    [(device["id"], device["id"], pid, device["numSms"])])


def short_name(demangled):
    """nsys's shortName (from CUPTI) is the function's base name; Kineto keeps only the
    demangled name, so it is derived: no parameters, template arguments, scope or return type."""
    depth, cut = 0, len(demangled)
    for i, c in enumerate(demangled):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0:
            cut = i
            break
    base, depth = [], 0
    for c in demangled[:cut]:
        depth += c == "<"
        if depth == 0:
            base.append(c)
        depth -= c == ">"
    return re.split(r"::|\s", "".join(base).strip())[-1] or demangled


def ns(value):
    """Kineto times are microseconds with three decimals: exact integer nanoseconds."""
    return int((Decimal(str(value)) * 1000).to_integral_value())


def kernel_row(e, origin, pid, grid_id, export):
    a = e["args"]
    start = ns(e["ts"]) - origin
    # Kineto's "shared memory" is static + dynamic together; it is written as dynamic.
    return (start, start + ns(e["dur"]), a["device"], a["context"], a["stream"], a["correlation"],
            global_pid(pid), export.string(e["name"]), export.string(short_name(e["name"])),
            a["registers per thread"], *a["grid"], *a["block"], 0, a["shared memory"], 0, 0,
            grid_id, "")


def from_trace(args):
    doc = json.load(gzip.open(args.trace) if args.trace.endswith(".gz") else open(args.trace))
    events = doc["traceEvents"]
    by_cat = {}
    for e in events:
        if e.get("ph") == "X":
            by_cat.setdefault(e.get("cat"), []).append(e)
    kernels, memsets = by_cat.get("kernel", []), by_cat.get("gpu_memset", [])
    calls = by_cat.get("cuda_runtime", []) + by_cat.get("cuda_driver", [])
    ranges = by_cat.get("user_annotation", [])
    pid = calls[0]["pid"]
    # nsys times count from the session start; this one starts 1 ms before the first event.
    origin = min(ns(e["ts"]) for e in kernels + memsets + calls + ranges) - 1_000_000

    out = Export(args.output, "kernlens scripts/make_nsys_fixture.py (Nsight Systems schema, data "
                              "from a PyTorch profiler trace)")
    out.write_gpu(doc["deviceProperties"][0], pid)
    out.create("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS")
    out.insert("CUPTI_ACTIVITY_KIND_KERNEL", KERNEL_COLUMNS,
               [kernel_row(e, origin, pid, i + 1, out) for i, e in enumerate(kernels)])
    out.insert("CUPTI_ACTIVITY_KIND_RUNTIME",
               ["start", "end", "eventClass", "globalTid", "correlationId", "nameId", "returnValue"],
               [(ns(e["ts"]) - origin, ns(e["ts"]) + ns(e["dur"]) - origin, 0,
                 global_tid(e["pid"], e["tid"]), e["args"]["correlation"], out.string(e["name"]), 0)
                for e in calls])
    out.insert("NVTX_EVENTS", ["start", "end", "eventType", "text", "globalTid", "domainId", "eventId"],
               [(ns(e["ts"]) - origin, ns(e["ts"]) + ns(e["dur"]) - origin, NVTX_PUSH_POP, e["name"],
                 global_tid(e["pid"], e["tid"]), 0, i + 1) for i, e in enumerate(ranges)])
    if memsets:
        # The memset's value and memory kind are not in the trace: value 0, memKind NULL.
        out.create("CUPTI_ACTIVITY_KIND_MEMSET", "ENUM_CUDA_MEM_KIND")
        out.insert("CUPTI_ACTIVITY_KIND_MEMSET",
                   ["start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                    "value", "bytes"],
                   [(ns(e["ts"]) - origin, ns(e["ts"]) + ns(e["dur"]) - origin, e["args"]["device"],
                     e["args"]["context"], e["args"]["stream"], e["args"]["correlation"],
                     global_pid(pid), 0, e["args"]["bytes"]) for e in memsets])
    out.finish(os.path.basename(args.trace))
    total = sum(ns(e["dur"]) for e in kernels)
    print(f"{args.output}: {len(kernels)} kernels ({total} ns), {len(memsets)} memsets, "
          f"{len(calls)} API calls, {len(ranges)} NVTX ranges")


def template_kernels(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute("""
        SELECT s.value, t.value, k.end - k.start, k.registersPerThread, k.gridX, k.gridY, k.gridZ,
               k.blockX, k.blockY, k.blockZ, k.staticSharedMemory, k.dynamicSharedMemory
        FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
        JOIN StringIds AS s ON s.id = k.demangledName
        JOIN StringIds AS t ON t.id = k.shortName
        ORDER BY k.start""").fetchall()
    gpu = db.execute("SELECT id, name, totalMemory, smCount, computeMajor, computeMinor "
                     "FROM TARGET_INFO_GPU").fetchone()
    db.close()
    return rows, gpu


def bench(args):
    kernels, gpu = template_kernels(args.template)
    pid, tid, layers, per_layer = 4242, 4242, 8, 40
    out = Export(args.output, "kernlens scripts/make_nsys_fixture.py bench (synthetic)")
    out.write_gpu({"id": gpu[0], "name": gpu[1], "totalGlobalMem": gpu[2], "numSms": gpu[3],
                   "computeMajor": gpu[4], "computeMinor": gpu[5], "warpSize": 32,
                   "regsPerBlock": 65536, "sharedMemPerBlock": 49152,
                   "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472,
                   "regsPerMultiprocessor": 65536, "maxThreadsPerMultiprocessor": 2048,
                   "maxThreadsPerBlock": 1024}, pid)
    out.create("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS")
    launch_name = out.string("cudaLaunchKernel_v7000")
    gtid, gpid = global_tid(pid, tid), global_pid(pid)
    krows, crows, nvtx = [], [], [(0, None, NVTX_DOMAIN_CREATE, "llm", gtid, 1)]
    cpu, gpu_free, n = 1_000_000, 0, 0

    def open_range(name, domain):
        nvtx.append([cpu, None, NVTX_PUSH_POP, name, gtid, domain])
        return nvtx[-1]

    while n < args.launches:
        generate = open_range("generate", 0)
        for step in range(16):  # one prefill, then decode steps
            stage = open_range("prefill" if step == 0 else "decode", 0)
            for layer in range(layers):
                rng = open_range(f"layer_{layer:02d}", 1)
                for _ in range(per_layer):
                    if n == args.launches:
                        break
                    k = kernels[n % len(kernels)]
                    n += 1
                    call_end = cpu + 4_000
                    start = max(gpu_free, call_end + 1_500)
                    gpu_free = start + k[2]
                    crows.append((cpu, call_end, 0, gtid, n, launch_name, 0))
                    krows.append((start, gpu_free, gpu[0], 1, 7, n, gpid, out.string(k[0]),
                                  out.string(k[1]), *k[3:12], 0, 0, n, ""))
                    cpu = call_end + 500
                rng[1] = cpu
                cpu += 200
            stage[1] = cpu
        generate[1] = cpu
        cpu += 10_000
    out.insert("CUPTI_ACTIVITY_KIND_KERNEL", KERNEL_COLUMNS, krows)
    out.insert("CUPTI_ACTIVITY_KIND_RUNTIME",
               ["start", "end", "eventClass", "globalTid", "correlationId", "nameId", "returnValue"], crows)
    out.insert("NVTX_EVENTS", ["start", "end", "eventType", "text", "globalTid", "domainId", "eventId"],
               [(*r, i + 1) for i, r in enumerate(nvtx)])
    out.finish(os.path.basename(args.template))
    print(f"{args.output}: {len(krows)} kernels, {len(crows)} launch calls, {len(nvtx)} NVTX events")


# StringIds last: it keeps the strings the other tables' rows name.
SEED_TABLES = ["META_DATA_EXPORT", "EXPORT_META_DATA", "TARGET_INFO_GPU", "TARGET_INFO_CUDA_DEVICE",
               "PROCESSES", "ENUM_NSYS_EVENT_TYPE", "ENUM_CUDA_MEMCPY_OPER", "CUPTI_ACTIVITY_KIND_KERNEL",
               "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
               "NVTX_EVENTS"]
STRING_ID_COLUMNS = {"demangledName", "shortName", "mangledName", "textId", "nameId"}


def seed(args):
    src = sqlite3.connect(f"file:{args.export}?mode=ro", uri=True)
    present = {r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if os.path.exists(args.output):
        os.remove(args.output)
    out = sqlite3.connect(args.output)
    out.execute("PRAGMA page_size = 512")
    string_ids = set()
    for table in [t for t in SEED_TABLES + ["StringIds"] if t in present]:
        cols = src.execute(f"PRAGMA table_info({table})").fetchall()  # cid, name, type, notnull, dflt, pk
        decl = ", ".join(f'"{c[1]}" {c[2]}' + (" NOT NULL" if c[3] else "") + (" PRIMARY KEY" if c[5] else "")
                         for c in cols)
        out.execute(f"CREATE TABLE {table} ({decl})")
        if table == "StringIds":
            rows = [r for r in src.execute("SELECT * FROM StringIds") if r[0] in string_ids]
        else:
            rows = src.execute(f"SELECT * FROM {table} LIMIT {args.rows}").fetchall()
            for c in cols:
                if c[1] in STRING_ID_COLUMNS:
                    string_ids.update(r[c[0]] for r in rows)
        if rows:
            out.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(cols))})", rows)
    out.commit()
    out.execute("VACUUM")
    out.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("trace", help="an export from a PyTorch profiler trace")
    t.add_argument("trace")
    t.add_argument("-o", "--output", required=True)
    b = sub.add_parser("bench", help="a large synthetic export")
    b.add_argument("--template", required=True, help="an export written by the trace command")
    b.add_argument("--launches", type=int, default=1_000_000)
    b.add_argument("-o", "--output", required=True)
    s = sub.add_parser("seed", help="a small copy of an export, for fuzzing")
    s.add_argument("export")
    s.add_argument("--rows", type=int, default=8)
    s.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    {"trace": from_trace, "bench": bench, "seed": seed}[args.command](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
