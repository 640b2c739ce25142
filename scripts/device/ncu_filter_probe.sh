#!/usr/bin/env bash
# Runs ncu_filter_probe under several ncu filters and writes what each profiled (issue 6).
#   scripts/device/ncu_filter_probe.sh PROBE_BINARY OUTDIR
probe=$1
out=$2
ncu=${NCU:-ncu}
base=("$ncu" --clock-control none --cache-control none --metrics gpu__time_duration.sum)
run() {
  local name=$1
  shift
  { echo "### $name: ${*}"; "${base[@]}" "$@" "$probe" 2>&1; echo "### exit $?"; } > "$out/$name.txt"
}
run id_regex_3 --kernel-id '::regex:^k[ABC]$:3'
run id_regex_invocation_regex --kernel-id '::regex:^k[ABC]$:regex:^(2|4)$'
run id_nvtx_2 --nvtx --nvtx-include prefill/ --kernel-id '::regex:^k[ABC]$:2'
run plc_skip1 --filter-mode per-launch-config -k 'regex:^k[ABC]$' --launch-skip 1 --launch-count 1
run plc_nvtx_skip1 --nvtx --nvtx-include prefill/ --filter-mode per-launch-config -k 'regex:^k[ABC]$' --launch-skip 1 --launch-count 1
run skip_nvtx --nvtx --nvtx-include prefill/ -k 'regex:^k[AB]$' --launch-skip 3 --launch-count 2
run kill --nvtx --nvtx-include prefill/ -k 'regex:^kA$' --launch-skip 1 --launch-count 1 --kill 1
