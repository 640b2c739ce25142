#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz) with clang, seeds a corpus per target from
# small pieces of tests/fixtures/ncu, tests/fixtures/pytorch, tests/fixtures/nsys and tests/fixtures/kltrace (fuzz_names:
# the kernel names of tests/fixtures/names and the rules files; fuzz_sweep_spec: the sweep
# files of tests/fixtures/sweep), and runs each target for FUZZ_SECONDS.
# Fails (exit 1) when any target crashes; crash inputs are left in build/fuzz/crashes/ (or FUZZ_BUILD/crashes/).
#
# Usage: scripts/fuzz.sh
# Env:   FUZZ_SECONDS  seconds per target (default 30)
#        FUZZ_JOBS     targets fuzzed at a time (default: the cores)
#        FUZZ_TARGETS  space-separated subset of the targets below (default: all)
#        FUZZ_CXX      the clang++ to use (default clang++, else clang++-14)
#        FUZZ_BUILD    a build directory already configured with KERNLENS_BUILD_FUZZ=ON (scripts/test.sh's
#                      sanitizer build, which builds the tests too): its harnesses are used as they are
# Needs clang with libFuzzer (Debian: clang-14 libclang-rt-14-dev), cmake, ninja, gzip, python3.
# Reproduce a crash: build/fuzz/tests/fuzz/TARGET build/fuzz/crashes/TARGET-crash-... (scripts/test.sh: build/sanitize)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD:-$root/build/fuzz}
fixtures=$root/tests/fixtures/ncu
seconds=${FUZZ_SECONDS:-30}
parallel=${FUZZ_JOBS:-$(nproc)}
all_targets="fuzz_ncu_raw fuzz_ncu_details fuzz_ncu_summary fuzz_read_any fuzz_csv_scanner \
fuzz_ncu_cells fuzz_names fuzz_pytorch_trace fuzz_nsys_stats fuzz_nsys_sqlite fuzz_kltrace fuzz_sweep_spec"
targets=${FUZZ_TARGETS:-$all_targets}

die() { echo "fuzz.sh: $*" >&2; exit 2; }
[[ $seconds =~ ^[0-9]+$ && $seconds -gt 0 ]] || die "FUZZ_SECONDS must be a positive integer, not '$seconds'"
[[ $parallel =~ ^[0-9]+$ && $parallel -gt 0 ]] || die "FUZZ_JOBS must be a positive integer, not '$parallel'"
for t in $targets; do
  [[ " $all_targets " == *" $t "* ]] || die "unknown target '$t' (known: $all_targets)"
done
# The same lookup as scripts/test.sh's, which passes its choice as FUZZ_CXX.
cxx=${FUZZ_CXX:-$(command -v clang++ || command -v clang++-14 || true)}
[[ -n $cxx ]] || die "clang++ not found (Debian: apt-get install clang-14 libclang-rt-14-dev)"
for tool in cmake ninja gzip truncate python3; do command -v $tool >/dev/null || die "$tool not found"; done

echo "== build ($cxx, $build)"
mkdir -p "$build"
if [[ -n ${FUZZ_BUILD:-} ]]; then
  grep -q '^KERNLENS_BUILD_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2> /dev/null ||
    die "FUZZ_BUILD=$build is not a build configured with -DKERNLENS_BUILD_FUZZ=ON"
else
  CXX=$cxx cmake -S "$root" -B "$build" -G Ninja -DKERNLENS_BUILD_FUZZ=ON -DKERNLENS_BUILD_TESTS=OFF \
    -DKERNLENS_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; die "cmake failed"; }
fi
# shellcheck disable=SC2086  # the target list is meant to split
ninja -C "$build" $targets || die "build failed (needs libclang-rt-14-dev for libFuzzer)"

# Seeds: small pieces of real exports. Whole fixtures are too big for -max_len and slow the
# fuzzer; the header plus a few rows reach every code path of a reader.
corpus=$build/corpus
crashes=$build/crashes
logs=$build/logs
mkdir -p "$crashes" "$logs"
for t in $all_targets; do mkdir -p "$corpus/$t"; done

# Seeds are cut to -max_len by truncate, not `| head -c`: SIGPIPE would fail under pipefail.
cap() { truncate -s '<65536' "$@"; }
# add_pieces NAME CONTENT-FILE TARGET...: the first 8 KB, the first 3 and 40 lines.
add_pieces() {
  local name=$1 content=$2
  shift 2
  for t in "$@"; do
    head -c 8192 "$content" > "$corpus/$t/seed-$name-8k"
    head -n 3 "$content" > "$corpus/$t/seed-$name-3l"
    head -n 40 "$content" > "$corpus/$t/seed-$name-40l"
    cap "$corpus/$t/seed-$name-3l" "$corpus/$t/seed-$name-40l"
  done
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$fixtures"/*; do
  name=$(basename "$f")
  name=${name%.gz}
  if [[ $f == *.gz ]]; then gzip -dc "$f" > "$tmp/$name"; else cp "$f" "$tmp/$name"; fi
  targets_of_file=(fuzz_read_any fuzz_csv_scanner)
  case $name in
    *raw* | *.log) targets_of_file+=(fuzz_ncu_raw) ;;  # logs: ncu console lines, maybe no header
    *details*) targets_of_file+=(fuzz_ncu_details) ;;  # after *raw*: raw_instances_details is raw
    *summary*) targets_of_file+=(fuzz_ncu_summary) ;;
  esac
  add_pieces "$name" "$tmp/$name" "${targets_of_file[@]}"
done
# nsys: the stats CSVs whole (they are small); the SQLite exports as small copies of the tables
# the reader reads (whole ones exceed -max_len).
for f in "$root"/tests/fixtures/nsys/*.csv; do
  for t in fuzz_nsys_stats fuzz_read_any fuzz_csv_scanner; do cp "$f" "$corpus/$t/seed-$(basename "$f")"; done
done
for f in "$root"/tests/fixtures/nsys/*.sqlite; do
  seed=$tmp/seed-$(basename "$f")
  if (($(stat -c %s "$f") < 65536)); then
    cp "$f" "$seed"
  else
    python3 "$root/scripts/fixtures/make_nsys_fixture.py" seed "$f" --rows 12 -o "$seed" > /dev/null
  fi
  for t in fuzz_nsys_sqlite fuzz_read_any; do cp "$seed" "$corpus/$t/"; done
done
# Pages of one report, NUL-separated: fuzz_read_any reads them as separate inputs.
join_pages() {
  local out=$corpus/fuzz_read_any/seed-$1
  { head -n 3 "$tmp/$2"; printf '\0'; head -n 40 "$tmp/$3"; } > "$out"
  cap "$out"
}
join_pages demo-raw+details demo_raw_base.csv demo_details.csv
join_pages qwen-raw+details qwen_decode_raw.csv qwen_decode_details.csv
join_pages qwen-raw+summary qwen_decode_raw.csv qwen_decode_summary.csv
# fuzz_ncu_cells: a byte for the power of ten (12 + pow10), then a cell and a unit of equal size.
cell_seed() {
  local n=$((${#2} > ${#3} ? ${#2} : ${#3}))
  printf "\\x$(printf %02x $((12 + $1)))%-${n}s%-${n}s" "$2" "$3" > "$corpus/fuzz_ncu_cells/seed-$4"
}
cell_seed 3 '12.128' 'us' 1
cell_seed 0 '2,589,629.63' 'ns' 2
cell_seed 0 '(128, 1, 1)' 'Kbyte/s' 3
cell_seed 0 '2,490,368 (524,288; 393,216)' 'byte' 4
cell_seed -3 '1 (0: 1)' 'cycle/nsecond' 5
cell_seed 9 'n/a' 'Ghz' 6
cell_seed 0 '1.5e3' 'register/thread' 7
cell_seed -3 '-0.001' '%/Kbyte' 8
cell_seed 0 '649  "<default domain>:step:none:none:none:none:none:none"  "dom:prefill:none:none:none:none:ASCII:prefill" ' 'msecond' 9
cell_seed 0 ' "0:<default domain>:io:none:none:none:none:none:none" ' '%' 10
# fuzz_names: every real kernel name, one a seed, and the rules files.
n=0
while IFS= read -r name; do
  n=$((n + 1))
  printf '%s' "$name" > "$corpus/fuzz_names/seed-name-$n"
done < <(cat "$root"/tests/fixtures/names/*.txt)
cp "$root/data/kernel_rules.txt" "$corpus/fuzz_names/seed-rules-builtin"
for f in "$root"/tests/fixtures/rules/*.txt; do cp "$f" "$corpus/fuzz_names/seed-rules-$(basename "$f")"; done
cap "$corpus"/fuzz_names/*

# PyTorch traces: the first 8 KB (a document cut short), and whole documents of the first 3
# and 40 events (the events after them dropped, the array and object closed).
# Each seed is cut once and copied to both targets (a cut of a 25 MB trace costs Python 0.4 s).
for f in "$root"/tests/fixtures/pytorch/*_trace.json.gz; do
  name=$(basename "$f" .json.gz)
  gzip -dc "$f" > "$tmp/$name.json"
  head -c 8192 "$tmp/$name.json" > "$tmp/seed-$name-8k"
  python3 - "$tmp/$name.json" "$tmp/seed-$name" 3 40 <<'PY'
import sys
doc, out = open(sys.argv[1]).read(), sys.argv[2]
for n in map(int, sys.argv[3:]):
    at = doc.index('"traceEvents"')
    for _ in range(n):
        at = doc.index("\n  }", at + 1)
    with open(f"{out}-{n}", "w") as seed:
        seed.write(doc[:at + 4] + "\n  ]\n}\n")
PY
  cap "$tmp/seed-$name-3" "$tmp/seed-$name-40"
  for t in fuzz_pytorch_trace fuzz_read_any; do cp "$tmp/seed-$name"-{8k,3,40} "$corpus/$t/"; done
done

# kltrace: the writer's fixture whole, and cut at a few places (truncated sections).
for f in "$root"/tests/fixtures/kltrace/*.kltrace; do
  for t in fuzz_kltrace fuzz_read_any; do
    cp "$f" "$corpus/$t/seed-$(basename "$f")"
    for n in 100 600 1200; do head -c $n "$f" > "$corpus/$t/seed-$(basename "$f")-$n"; done
  done
done

# Sweep files: the test fixtures (good and bad) and the device sweep, whole.
for f in "$root"/tests/fixtures/sweep/*.toml "$root"/scripts/device/*.toml; do
  cp "$f" "$corpus/fuzz_sweep_spec/seed-$(basename "$f")"
done

# Run, FUZZ_JOBS targets at a time (default: the cores), each for its own FUZZ_SECONDS. UBSan
# only reports by default; halt_on_error makes undefined behaviour a crash.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
fuzz_target() {
  local t=$1 rc=0 dict=$root/tests/fuzz/ncu.dict
  [[ $t == fuzz_names ]] && dict=$root/tests/fuzz/names.dict
  [[ $t == fuzz_pytorch_trace ]] && dict=$root/tests/fuzz/pytorch_trace.dict
  [[ $t == fuzz_sweep_spec ]] && dict=$root/tests/fuzz/sweep_spec.dict
  "$build/tests/fuzz/$t" "$corpus/$t" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 -dict="$dict" -artifact_prefix="$crashes/$t-" \
    -print_final_stats=1 > "$logs/$t.log" 2>&1 || rc=$?
  echo $rc > "$logs/$t.rc"
}
for t in $targets; do
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || true; done
  rm -f "$logs/$t.rc"
  fuzz_target "$t" &
done
wait
failed=()
printf '%-18s %8s %10s %8s %s\n' target status execs/s corpus log
for t in $targets; do
  rc=$(cat "$logs/$t.rc" 2> /dev/null || echo lost)
  execs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logs/$t.log" | tail -1)
  units=$(find "$corpus/$t" -type f | wc -l)
  status=ok
  if [[ $rc != 0 ]]; then
    status="FAIL($rc)"
    failed+=("$t")
  fi
  printf '%-18s %8s %10s %8s %s\n' "$t" "$status" "${execs:--}" "$units" "$logs/$t.log"
done

if ((${#failed[@]})); then
  echo "== crashes in: ${failed[*]}"
  for t in "${failed[@]}"; do
    grep -m1 -E 'ERROR: |runtime error|invariant violated|deadly signal' "$logs/$t.log" | sed "s/^/$t: /" || true
    grep -o "Test unit written to .*" "$logs/$t.log" | sed "s/^/$t: /" || true
  done
  exit 1
fi
echo "== no crashes ($seconds s per target)"
