#!/usr/bin/env bash
# Checks kernlens's reading of Nsight Systems SQLite exports against NVIDIA's own report
# scripts. Run it where nsys is installed (`nsys stats` works even where nsys cannot profile),
# on the fixtures kernlens generates (tests/fixtures/nsys/llama_stages.sqlite) or on any real
# export:
#
#   scripts/validate_nsys_fixture.sh OUTDIR FILE.sqlite...
#
# For each file, into OUTDIR/<name>.*:
#   - nsys stats --format csv --output - of cuda_gpu_kern_sum (plain, :base, :nvtx-name, and
#     --timeunit usec), cuda_gpu_kern_gb_sum, nvtx_gpu_proj_trace, cuda_gpu_trace, nvtx_sum,
#     each with its stderr and exit code: whether NVIDIA's scripts accept the file at all;
#   - kernlens analyze --format json of the file, and of nsys's own cuda_gpu_kern_sum CSV;
#   - compare.txt: per kernel, launches and total ns from nsys's summary against kernlens;
#     kernlens reading nsys's CSV against kernlens reading the database; per NVTX range, the
#     summed projected duration of nvtx_gpu_proj_trace against kernlens's stage wall time
#     (nsys projects memcpy/memset too, kernlens kernels only: a range that starts or ends
#     with a memory operation differs by that much); kernel count and time in cuda_gpu_trace.
#
# Exit 1 when a report fails or kernel totals disagree (projection differences are listed).
# Env: NSYS (default: nsys on PATH, else /opt/nvidia/*/host*/target-linux-x64/nsys),
#      KERNLENS (default: build/kernlens),
#      PHASE: all (default); nsys (only run nsys stats, e.g. on a machine without kernlens);
#      compare (only kernlens and the comparison, on the CSVs a `PHASE=nsys` run left in OUTDIR).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "validate_nsys_fixture.sh: $*" >&2; exit 2; }
(($# >= 2)) || die "usage: $0 OUTDIR FILE.sqlite..."
out=$1
shift
phase=${PHASE:-all}
[[ $phase == all || $phase == nsys || $phase == compare ]] || die "PHASE must be all, nsys or compare"
nsys=${NSYS:-$(command -v nsys || true)}
if [[ $phase != compare ]]; then
  if [[ -z $nsys ]]; then
    for candidate in /opt/nvidia/*/host*/target-linux-x64/nsys /opt/nvidia/*/*/host*/target-linux-x64/nsys; do
      [[ -x $candidate ]] && nsys=$candidate && break
    done
  fi
  [[ -n $nsys && -x $nsys ]] || die "nsys not found (set NSYS)"
fi
kernlens=${KERNLENS:-$root/build/kernlens}
if [[ $phase != nsys ]]; then
  [[ -x $kernlens ]] || die "kernlens not found at $kernlens (build it, or set KERNLENS)"
  command -v python3 > /dev/null || die "python3 not found"
fi
mkdir -p "$out"
[[ $phase == compare ]] || "$nsys" --version > "$out/nsys_version.txt"

failed=0
for file in "$@"; do
  name=$(basename "$file" .sqlite)
  base=$out/$name
  if [[ $phase != compare ]]; then
    # nsys stats reads a copy: it must not touch the fixture (it may add files beside it).
    cp "$file" "$base.sqlite"
    for report in cuda_gpu_kern_sum cuda_gpu_kern_sum:base cuda_gpu_kern_sum:nvtx-name cuda_gpu_kern_gb_sum \
                  nvtx_gpu_proj_trace cuda_gpu_trace nvtx_sum; do
      tag=${report/:/_}
      rc=0
      "$nsys" stats --report "$report" --format csv --output - "$base.sqlite" > "$base.$tag.csv" 2> "$base.$tag.err" || rc=$?
      echo "rc=$rc" >> "$base.$tag.err"
      if ((rc != 0)) || grep -q "^ERROR\|^SKIPPED" "$base.$tag.csv" "$base.$tag.err"; then
        echo "$name: nsys stats --report $report failed or skipped, see $base.$tag.err" | tee -a "$out/failures.txt"
        failed=1
      fi
    done
    "$nsys" stats --report cuda_gpu_kern_sum --timeunit usec --format csv --output - "$base.sqlite" \
      > "$base.cuda_gpu_kern_sum_usec.csv" 2> "$base.cuda_gpu_kern_sum_usec.err" || true
  fi
  [[ $phase == nsys ]] && continue
  "$kernlens" analyze "$file" --format json > "$base.kernlens.json" 2> "$base.kernlens.err" || failed=1
  "$kernlens" analyze "$base.cuda_gpu_kern_sum.csv" --format json > "$base.kernlens_stats.json" \
    2> "$base.kernlens_stats.err" || failed=1
  python3 - "$base" > "$base.compare.txt" <<'EOF' || failed=1
import collections, csv, io, json, sys
base = sys.argv[1]
bad = []

def table(path):
    lines = open(path).read().splitlines()
    start = next((i for i, l in enumerate(lines) if not l.startswith("Processing [")), len(lines))
    return list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))

def report(what, a, b, exact=True):
    same = a == b
    print(f"{'same   ' if same else 'DIFFERS'} {what}: nsys {a}  kernlens {b}")
    if exact and not same:
        bad.append(what)

db = json.load(open(base + ".kernlens.json"))
kernels = {k["name"]: (k["launches"], round(k["total_ns"])) for k in db["kernels"]}
nsys_kernels = {r["Name"]: (int(r["Instances"]), int(r["Total Time (ns)"])) for r in table(base + ".cuda_gpu_kern_sum.csv")}
report("kernels (name -> launches, total ns)", len(nsys_kernels), len(kernels))
for name, v in sorted(nsys_kernels.items()):
    report(f"  {name[:70]}", v, kernels.get(name))
via_csv = json.load(open(base + ".kernlens_stats.json"))["totals"]
report("kernlens on nsys's CSV vs on the database: totals", via_csv, db["totals"])

proj = collections.defaultdict(lambda: [0, 0])
for r in table(base + ".nvtx_gpu_proj_trace.csv"):
    domain, _, text = r["Name"].partition(":")
    label = f"{domain}@{text}" if domain else text
    proj[label][0] += int(r["Projected Duration (ns)"])
    proj[label][1] += 1
walls = collections.defaultdict(int)
for s in db["stages"]:
    if s["name"] != "(whole run)":
        walls[s["name"].split("/")[-1]] += round(s.get("wall_ns", 0))
print("NVTX ranges: summed projected duration (nsys, memory operations included) vs stage wall time")
for label, (ns, n) in sorted(proj.items()):
    report(f"  {label} ({n} instances)", ns, walls.get(label), exact=False)

trace = table(base + ".cuda_gpu_trace.csv")
if not trace:  # nsys skipped the report (older exports lack ENUM_CUDA_MEMCPY_OPER)
    print("skipped cuda_gpu_trace: nsys wrote no rows")
    sys.exit(1 if bad else 0)
ktime = sum(int(r["Duration (ns)"]) for r in trace if not r["Name"].startswith("[CUDA mem"))
kcount = sum(1 for r in trace if not r["Name"].startswith("[CUDA mem"))
report("cuda_gpu_trace kernels (count, ns)", (kcount, ktime), (db["totals"]["launches"], round(db["totals"]["kernel_time_ns"])))
sys.exit(1 if bad else 0)
EOF
  echo "$name: $(grep -c '^same' "$base.compare.txt") same, $(grep -c '^DIFFERS' "$base.compare.txt") differ ($base.compare.txt)"
done
exit $failed
