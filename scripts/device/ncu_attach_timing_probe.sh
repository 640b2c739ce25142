#!/usr/bin/env bash
# When may `ncu --mode attach` connect to a program started under `ncu --mode launch`? (issue 15,
# early start). The first real run of kernlens's early start attached 32 s after the launch and
# ncu said "No attachable process found." Variants, each with its own port:
#   A  --port P --max-connections 1, the program reaches CUDA at once, attach after 12 s
#   B  the same, the program reaches CUDA after 20 s, attach after 3 s (before it)
#   C  B with ncu's default ports
#   scripts/device/ncu_attach_timing_probe.sh OUT      -> OUT/attach_timing.log
set -u
out=${1:?usage: ncu_attach_timing_probe.sh OUT}
mkdir -p "$out"
log=$out/attach_timing.log
: > "$log"
t0=$(date +%s.%N)
stamp() { echo "[$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%7.2f", b - a }')] $*" >> "$log"; }
work=$(mktemp -d)
variant() {  # NAME CUDA_AFTER_S ATTACH_AFTER_S PORT(empty: default) TARGET_PROCESSES [MAX_CONNECTIONS]
  local name=$1 cuda_after=$2 attach_after=$3 port=$4 targets=$5 ports=()
  [[ -n $port ]] && ports=(--port "$port" --max-connections "${6:-1}")
  stamp "=== $name: program reaches CUDA after ${cuda_after} s, attach after ${attach_after} s, ports ${ports[*]:-default}, --target-processes $targets"
  local launch_opts=(--nvtx)
  [[ $targets != default ]] && launch_opts+=(--target-processes "$targets")
  ncu --mode launch "${launch_opts[@]}" "${ports[@]}" python3 -c "
import time
import torch
print('imported', flush=True)
time.sleep($cuda_after)
print('first CUDA call', flush=True)
x = torch.ones(1024, device='cuda'); y = x + 1; z = y * 2; torch.cuda.synchronize()
print('done', float(z.sum()), flush=True)" > "$work/$name.app.log" 2>&1 &
  local app=$!
  sleep "$attach_after"
  stamp "attach starts"
  timeout 60 ncu --mode attach --hostname 127.0.0.1 "${ports[@]}" --clock-control none --section SpeedOfLight \
    -c 1 --kill 1 -f -o "$work/$name" > "$work/$name.attach.log" 2>&1
  stamp "attach exit $?"
  timeout 10 tail --pid=$app -f /dev/null
  kill -9 $app 2>/dev/null
  wait $app 2>/dev/null
  stamp "app exit $?"
  sed 's/^/  app | /' "$work/$name.app.log" >> "$log"
  sed 's/^/  ncu | /' "$work/$name.attach.log" >> "$log"
  [[ -f $work/$name.ncu-rep ]] && stamp "report written" || stamp "no report"
}
# Round 1 (H100, 2026-11-23): A, B and C as below with --target-processes application-only all
# failed: "==WARNING== No processes found on 127.0.0.1 (ports 51234-51234)." / "==ERROR== No
# attachable process found.", the program stopped at its first CUDA call; C with the default ports too.
# Round 2: --target-processes all (ncu's default, as the first probe that worked).
# Round 2 (same day): D (all, port 51434, max 1, attach after the first CUDA call) and E (all,
# port 51534, max 1, attach before it) failed the same way.
# Round 3: the first probe's own options (launch --nvtx, ncu's defaults), then 4 ports.
# Result: F, G and H all attached ("==PROF== Attaching to process '/usr/bin/python3.12' (2983) on
# port 51634."), profiled the kernel, --kill ended the program, report written. kernlens's early
# start launches with --nvtx and 4 ports (ncu_command.cpp) and tries again while ncu finds nothing.
variant F 0 10 "" default
variant G 0 10 51634 all 4
variant H 0 10 51734 application-only 4
ncu --help 2>&1 | grep -A6 -E -- '--max-connections|--port|--hostname' >> "$log"
rm -rf "$work"
