#!/usr/bin/env bash
# Why a deep run under ncu did not get through NCCL's start-up on two GPUs (BENCHMARKS.md, issue
# 24 on two H100s): examples/workloads/tp_stages.py as 2 ranks over NCCL under torchrun, rank 0
# under plain ncu (one kernel of `prefill`, SpeedOfLight, --clock-control none), rank 1 untouched,
# with NCCL_DEBUG=INFO, once per NCCL setting below; then, as kernlens runs them, each rank's
# program twice in one torchrun job (discovery, then a deep run with TORCHELASTIC_RESTART_COUNT
# moved by 1000), the second run untouched or with rank 0 under ncu. Each under `timeout`, so the
# whole script stays under 6 minutes. NCCL_NVLS_ENABLE=0 throughout (the device README).
#   scripts/device/ncu_nccl_probe.sh OUT [all|settings|twice|fresh]   (nvidia-h100-x2 or nvidia-h200-x2)
# Writes OUT/probe.log (per variant: exit code, wall time, ncu's lines, each rank's last lines).
set -u
out=${1:?usage: ncu_nccl_probe.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
export NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out"
log=$out/probe.log
work=$(mktemp -d)
cat > "$work/rank.sh" <<'RANK'
#!/usr/bin/env bash
# One rank: rank 0 under ncu, the others as they are; $VARIANT's NAME=VALUE words set NCCL.
# TWICE=untouched|ncu: first a run of every rank as it is, then the run above (ncu: as said;
# untouched: no ncu) with TORCHELASTIC_RESTART_COUNT moved as kernlens moves it.
prog=(python3 "$ROOT/examples/workloads/tp_stages.py" --layers 2 --batch 4 --prompt 128 --decode-steps 2)
if [[ -n ${TWICE:-} ]]; then
  echo "first run, restart count ${TORCHELASTIC_RESTART_COUNT:-unset}, agent store ${TORCHELASTIC_USE_AGENT_STORE:-unset}, master ${MASTER_ADDR:-}:${MASTER_PORT:-}" > "$WORK/rank${RANK}_${TAG}_first.log"
  NCCL_DEBUG=INFO "${prog[@]}" >> "$WORK/rank${RANK}_${TAG}_first.log" 2>&1
  echo "first run rc=$?" >> "$WORK/rank${RANK}_${TAG}_first.log"
  export TORCHELASTIC_RESTART_COUNT=$(( ${TORCHELASTIC_RESTART_COUNT:-0} + 1000 ))
  # FRESH_STORE=PORT: the second run's store is its own, hosted by rank 0 on PORT.
  [[ -n ${FRESH_STORE:-} ]] && export TORCHELASTIC_USE_AGENT_STORE=False MASTER_PORT=$FRESH_STORE
  [[ $TWICE == untouched ]] && exec env NCCL_DEBUG=INFO "${prog[@]}" > "$WORK/rank${RANK}_$TAG.log" 2>&1
fi
if [[ $RANK == 0 ]]; then
  exec env $VARIANT NCCL_DEBUG=INFO ncu --target-processes all --clock-control none --nvtx --nvtx-include prefill/ \
    -c 1 --section SpeedOfLight -o "$WORK/report_$TAG" "${prog[@]}" > "$WORK/rank0_$TAG.log" 2>&1
fi
exec env $VARIANT NCCL_DEBUG=INFO "${prog[@]}" > "$WORK/rank${RANK}_$TAG.log" 2>&1
RANK
chmod +x "$work/rank.sh"
probe() {  # TAG VARIANT [TWICE [FRESH_STORE_PORT]]
  local tag=$1 t0=$SECONDS
  echo "== $tag: ${2:-(no NCCL setting)} ${3:+twice: $3} ($(date +%T))" >> "$log"
  ROOT=$root WORK=$work TAG=$tag VARIANT=$2 TWICE=${3:-} FRESH_STORE=${4:-} timeout 100 torchrun --nproc-per-node 2 --no-python "$work/rank.sh" \
    > "$work/torchrun_$tag.log" 2>&1
  echo "rc=$? wall_s=$((SECONDS - t0))" >> "$log"
  for r in 0 1; do
    [[ -f $work/rank${r}_${tag}_first.log ]] && { head -1 "$work/rank${r}_${tag}_first.log"; tail -1 "$work/rank${r}_${tag}_first.log"; } >> "$log"
    echo "-- rank $r: ==PROF== / errors / last NCCL lines" >> "$log"
    grep -E "==PROF==|==ERROR==|==WARNING==|Error|error" "$work/rank${r}_$tag.log" | head -12 >> "$log"
    grep "NCCL INFO" "$work/rank${r}_$tag.log" | tail -6 >> "$log"
  done
}
case ${2:-all} in
  settings) probe plain ""; probe cumem_off "NCCL_CUMEM_ENABLE=0"; probe p2p_shm_off "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1" ;;
  twice) probe twice_untouched "" untouched; probe twice_ncu "" ncu ;;
  fresh) probe twice_ncu_fresh_store "" ncu 29733 ;;
  *) probe plain ""; probe twice_untouched "" untouched; probe twice_ncu "" ncu ;;
esac
tar czf "$out/probe_logs.tgz" -C "$work" --exclude='*.ncu-rep' .
rm -rf "$work"
