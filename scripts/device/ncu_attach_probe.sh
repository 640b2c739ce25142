#!/usr/bin/env bash
# Can the deep pass start the program before discovery ends? Probes ncu's launch/attach modes
# on the GPU machine (issue 15's cost): the program starts under `ncu --mode launch`, which
# suspends it at its first CUDA call; `ncu --mode attach` later gives the filters and sections.
#   scripts/device/ncu_attach_probe.sh OUT
# Writes OUT/attach_probe.log: every step with a wall-clock stamp, ncu's own lines, and what the
# report holds.
set -u
out=${1:?usage: ncu_attach_probe.sh OUT}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
log=$out/attach_probe.log
: > "$log"
stamp() { echo "[$(date +%s.%N | cut -c1-14)] $*" >> "$log"; }
prog=(python3 "$here/ncu_attach_probe.py")
work=$(mktemp -d)
{ ncu --version; ncu --help 2>&1 | grep -B1 -A8 -E -- '--mode|--hostname|--port|--query-injection'; } >> "$log" 2>&1

wait_for_suspend() {  # LOGFILE: until ncu says the process waits, at most 60 s
  for _ in $(seq 1 600); do
    grep -q -i -E 'waiting|attach|suspend' "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

variant() {  # NAME LAUNCH_OPTS... -- ATTACH_OPTS...
  local name=$1; shift
  local launch=() attach=()
  while [[ $1 != -- ]]; do launch+=("$1"); shift; done; shift
  attach=("$@")
  stamp "=== $name: launch ${launch[*]} / attach ${attach[*]}"
  ncu --mode launch "${launch[@]}" "${prog[@]}" > "$work/$name.app.log" 2>&1 &
  local app=$!
  if wait_for_suspend "$work/$name.app.log"; then stamp "suspended"; else stamp "no suspend line in 60 s"; fi
  sleep "${ATTACH_AFTER_S:-4}"  # as if discovery ran meanwhile
  stamp "attach starts"
  timeout 120 ncu --mode attach --hostname 127.0.0.1 --clock-control none "${attach[@]}" -f -o "$work/$name" \
    > "$work/$name.attach.log" 2>&1
  stamp "attach exit $?"
  timeout 20 tail --pid=$app -f /dev/null
  kill -9 $app 2>/dev/null
  wait $app 2>/dev/null
  stamp "app exit $?"
  sed 's/^/  app | /' "$work/$name.app.log" >> "$log"
  sed 's/^/  ncu | /' "$work/$name.attach.log" >> "$log"
  if [[ -f $work/$name.ncu-rep ]]; then
    ncu -i "$work/$name.ncu-rep" --page raw --csv --metrics gpu__time_duration.sum 2>&1 | cut -c1-300 | sed 's/^/  rep | /' >> "$log"
  else
    stamp "no report"
  fi
}

kid='::regex:.:2'   # the 2nd launch of every kernel in the range
# Round 1 (2026-11-23): --nvtx is refused by --mode attach ("Invalid option --nvtx specified for
# --mode attach"), so NVTX tracing is switched on at launch and filtered at attach; and the
# "Waiting for profiler to attach" line comes at once, before the program's first CUDA call.
# Round 2: `--kill` needs a launch count ("--kill cannot be used when launch count is zero");
# --nvtx-include was accepted at attach.
variant nvtx_at_launch --nvtx -- --nvtx-include prefill/ --kernel-id "$kid" --section SpeedOfLight -c 3 --kill 1
# Passive injection (no ncu process until attach), as some serving setups use it.
stamp "=== passive: CUDA_INJECTION64_PATH=\$(ncu --query-injection-path)"
inj=$(ncu --query-injection-path 2>>"$log")
stamp "injection path: $inj"
tar czf "$out/attach_probe_reports.tgz" -C "$work" . 2>/dev/null
rm -rf "$work"
