#!/usr/bin/env python3
"""Independent check of `kernlens analyze` on Nsight Systems exports.

Recomputes, with Python's sqlite3 and csv modules (no code shared with kernlens), each file's
kernel time, launch count and per-kernel totals, and for SQLite exports the kernel time and
launches of every NVTX stage, then compares them with `kernlens analyze FILE --format json`.

Stages are computed the slow, obvious way Nsight Systems defines them (its nvtx_gpu_proj_trace
report): a kernel is in a range when the CUDA API call with its correlation id (same process)
lies inside the range on the thread where the range started; ranges ending on another thread
are left out.

    check_nsys_totals.py --kernlens build/kernlens tests/fixtures/nsys/*.sqlite ...kern_sum.csv
"""
import collections
import csv
import io
import sqlite3
import sys
from decimal import Decimal

from kernel_totals import compare_kernels, differs, main

NS_PER_UNIT = {"ns": 1, "us": 1000, "ms": 10**6, "s": 10**9}
# NVTX event types when the export has no ENUM_NSYS_EVENT_TYPE (nsys's own report scripts
# use these numbers): push/pop 59 and 70, start/end 60 and 71, domain creation 75.
DEFAULT_TYPES = {"push_pop": {59, 70}, "start_end": {60, 71}, "domain": {75}}


def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def columns(db, table):
    return {r[1] for r in db.execute(f"PRAGMA table_info({table})")}


def event_types(db):
    if "ENUM_NSYS_EVENT_TYPE" not in tables(db):
        return DEFAULT_TYPES
    names = dict(db.execute("SELECT name, id FROM ENUM_NSYS_EVENT_TYPE"))
    pick = lambda *ns: {names[n] for n in ns if n in names}
    found = {"push_pop": pick("NvtxPushPopRange", "NvtxtPushPopRange"),
             "start_end": pick("NvtxStartEndRange", "NvtxtStartEndRange"),
             "domain": pick("NvtxDomainCreate")}
    return found if found["push_pop"] or found["start_end"] else DEFAULT_TYPES


def nvtx_ranges(db, trace_end):
    """(tid, start, end, kind, label) of every range; label 'domain@name' or 'name'."""
    if "NVTX_EVENTS" not in tables(db):
        return []
    types = event_types(db)
    strings = dict(db.execute("SELECT id, value FROM StringIds"))
    end_tid = "endGlobalTid" if "endGlobalTid" in columns(db, "NVTX_EVENTS") else "NULL"
    rows = db.execute(f"SELECT start, end, eventType, text, textId, domainId, globalTid, {end_tid} "
                      "FROM NVTX_EVENTS").fetchall()
    text = lambda r: strings.get(r[4]) if r[4] is not None and r[4] in strings else (r[3] or "")
    pid = lambda tid: (tid >> 24) & 0xFFFFFF
    domains = {}
    for r in sorted(rows, key=lambda r: r[0]):
        if r[2] in types["domain"] and r[5] is not None:
            domains.setdefault((pid(r[6]), r[5]), text(r))
    out = []
    for r in rows:
        kind = "pp" if r[2] in types["push_pop"] else "se" if r[2] in types["start_end"] else None
        if kind is None or r[7] is not None:
            continue
        domain = domains.get((pid(r[6]), r[5]), "") if r[5] is not None else ""
        label = f"{domain}@{text(r)}" if domain else text(r)
        out.append((r[6], r[0], r[1] if r[1] is not None else trace_end, kind, label))
    return out


def expected_sqlite(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    name_cols = [c for c in ("demangledName", "shortName", "mangledName")
                 if c in columns(db, "CUPTI_ACTIVITY_KIND_KERNEL")]
    name = "coalesce(" + ", ".join(f"(SELECT value FROM StringIds WHERE id = k.{c})" for c in name_cols) + ")"
    kernels = db.execute(f"SELECT k.start, k.end, k.correlationId, k.globalPid, {name} "
                         "FROM CUPTI_ACTIVITY_KIND_KERNEL AS k").fetchall()
    calls = {}
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables(db):
        for tid, corr, start, end in db.execute(
                "SELECT globalTid, correlationId, start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
            key = (tid & ~0xFFFFFF, corr)
            # Two records of one launch (a wrapper and the call it makes): the inner one.
            if key not in calls or (start, -end) > (calls[key][1], -calls[key][2]):
                calls[key] = (tid, start, end)
    # A range that never ends lasts to the last timestamp of the trace.
    times = [c[2] for c in calls.values()]
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if table in tables(db):
            times += [r[0] for r in db.execute(f"SELECT end FROM {table}")]
    if "NVTX_EVENTS" in tables(db):
        times += [t for r in db.execute("SELECT start, end FROM NVTX_EVENTS") for t in r if t is not None]
    ranges = nvtx_ranges(db, max(times))
    per_kernel = collections.defaultdict(lambda: [Decimal(0), 0])
    per_stage = collections.defaultdict(lambda: [Decimal(0), 0])
    for start, end, corr, gpid, kname in kernels:
        per_kernel[kname][0] += end - start
        per_kernel[kname][1] += 1
        call = calls.get((gpid, corr)) if gpid is not None else None
        if call is None:
            continue
        tid, cs, ce = call
        inside = [r for r in ranges if r[0] == tid and r[1] <= cs and r[2] >= ce]
        push_pop = sorted((r for r in inside if r[3] == "pp"), key=lambda r: (r[1], -r[2]))
        rows = ["/".join(r[4] for r in push_pop[:i + 1]) for i in range(len(push_pop))]
        rows += [r[4] for r in inside if r[3] == "se"]
        for row in set(rows):
            per_stage[row][0] += end - start
            per_stage[row][1] += 1
    return per_kernel, per_stage


def split_nvtx_name(name):
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        c = name[i]
        depth += c in ")>]}"
        depth -= c in "(<[{"
        if c == "/" and depth == 0:
            return name[:i], name[i + 1:]
    return None


def expected_stats_csv(path):
    lines = open(path, encoding="utf-8").read().splitlines()
    start = next(i for i, l in enumerate(lines) if "Instances" in l and "Total Time" in l)
    preamble = "\n".join(lines[:start])
    split = "Processing [" not in preamble or "nvtx-name" in preamble
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = rows[0]
    total_col = next(i for i, h in enumerate(header) if h.startswith("Total Time"))
    unit = header[total_col][len("Total Time"):].strip(" ()") or "ns"
    per_kernel = collections.defaultdict(lambda: [Decimal(0), 0])
    per_stage = collections.defaultdict(lambda: [Decimal(0), 0])
    for r in rows[1:]:
        if not r:
            break
        name = r[header.index("Name")]
        n = int(r[header.index("Instances")])
        ns = Decimal(r[total_col]) * NS_PER_UNIT[unit]
        parts = split_nvtx_name(name) if split else None
        if parts and parts[0] and parts[1]:
            per_stage[parts[0]][0] += ns
            per_stage[parts[0]][1] += n
            name = parts[1]
        per_kernel[name][0] += ns
        per_kernel[name][1] += n
    return per_kernel, per_stage


def check(doc, path):
    want, want_stages = (expected_sqlite if path.endswith(".sqlite") else expected_stats_csv)(path)
    errors = compare_kernels(doc, want)
    got = {s["name"]: (s["kernel_time_ns"], s["launches"]) for s in doc.get("stages", [])
           if s["name"] != "(whole run)"}
    if set(got) != set(want_stages):
        errors.append(f"stages {sorted(got)} != {sorted(want_stages)}")
    for name, (ns, n) in want_stages.items():
        if name in got and (differs(got[name][0], ns) or got[name][1] != n):
            errors.append(f"stage {name}: {got[name]} != ({ns}, {n})")
    return errors


if __name__ == "__main__":
    sys.exit(main(__doc__, check))
