# Sourced by the reader benchmarks of scripts/device: makes their big inputs one at a time in
# $work, runs `CALLBACK LABEL FILE` on each, then deletes it.
#   each_big_input CALLBACK "RAW_MB..." "TRACE_MB..." "NSYS_LAUNCHES..."     ("" skips a kind)
# Raw pages: scripts/bench/make_big_raw.py (the real Qwen decode fixture repeated); traces:
# scripts/bench/make_big_trace.py (the real H100 llama trace repeated); nsys exports:
# scripts/fixtures/make_nsys_fixture.py bench (the real llama export's kernels repeated).
each_big_input() {
  local callback=$1 launches file
  each_sized_input "$callback" raw csv make_big_raw.py "$2"
  each_sized_input "$callback" trace json make_big_trace.py "$3"
  for launches in $4; do
    file=$work/nsys_${launches}.sqlite
    make_nsys_export "$launches" "$file"
    "$callback" "nsys_$((launches / 1000))k" "$file"
    rm -f "$file"
  done
}

# make_nsys_export LAUNCHES FILE: an nsys export of LAUNCHES kernels, the real llama export's
# repeated (scripts/fixtures/make_nsys_fixture.py bench). With EXPORT_CACHE set (a folder on the
# same file system), each size is made once there and linked to FILE after: scripts run one
# after the other in a call share it (the 8 M export takes ~70 s to make).
make_nsys_export() {
  local cached=${EXPORT_CACHE:+$EXPORT_CACHE/nsys_$1.sqlite}
  if [[ -n $cached && -f $cached ]]; then
    ln -f "$cached" "$2" 2> /dev/null || cp "$cached" "$2"
    return
  fi
  python3 "$root/scripts/fixtures/make_nsys_fixture.py" bench --template "$root/tests/fixtures/nsys/llama_stages.sqlite" \
    --launches "$1" -o "$2" > /dev/null
  if [[ -n $cached ]]; then mkdir -p "$EXPORT_CACHE" && { ln -f "$2" "$cached" 2> /dev/null || cp "$2" "$cached"; }; fi
}

# each_sized_input CALLBACK KIND EXT MAKER "MB...": KIND_<MB>MB.EXT made by scripts/bench/MAKER.
each_sized_input() {
  local callback=$1 kind=$2 ext=$3 maker=$4 mb file
  for mb in $5; do
    file=$work/${kind}_${mb}MB.$ext
    python3 "$root/scripts/bench/$maker" -s "$mb" -o "$file" > /dev/null
    "$callback" "${kind}${mb}MB" "$file"
    rm -f "$file"
  done
}

# build/devrun (scripts/device/make_devrun.sh) is $devrun; use_devrun puts its libraries on
# LD_LIBRARY_PATH, and with `perf NAME` also makes its perf (`PERF=1 make_devrun.sh`: the GPU
# machine has none) the `perf` command, NAME exiting 2 when it is missing.
devrun=$root/build/devrun
use_devrun() {
  export LD_LIBRARY_PATH=$devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  [[ ${1:-} == perf ]] || return 0
  [[ -x $devrun/perf/perf ]] || { echo "$2: no $devrun/perf/perf: PERF=1 scripts/device/make_devrun.sh" >&2; exit 2; }
  perf() { LD_LIBRARY_PATH=$devrun/perf/lib:$LD_LIBRARY_PATH "$devrun/perf/perf" "$@"; }
}

# Builds side by side (compare_reader_builds.sh, shootdown_probe.sh): the larger peak RSS, in
# MiB, of two runs of `BIN analyze FILE --format json` at --threads THREADS (N@CPUS: N threads
# pinned to CPUS with taskset), and the md5 of BIN's JSON at 16 threads.
peak_mib() {  # BIN FILE THREADS
  local pin=() peak=0 m
  [[ $3 == *@* ]] && pin=(taskset -c "${3#*@}")
  for _ in 1 2; do
    m=$(/usr/bin/time -f '%M' "${pin[@]}" "$1" analyze "$2" --format json -o /dev/null --threads "${3%@*}" 2>&1 > /dev/null | tail -1)
    (( m > peak )) && peak=$m
  done
  awk "BEGIN { printf \"%.1f\", $peak / 1024 }"
}
json_md5() { "$1" analyze "$2" --format json --threads 16 | md5sum | cut -d' ' -f1; }  # BIN FILE
