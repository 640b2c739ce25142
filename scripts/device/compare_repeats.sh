#!/usr/bin/env bash
# Issue 19 on the GPU: `kernlens profile --repeat` and group compare on real runs.
#   same:    5 runs of one configuration against 5 more                    (expect no regression)
#   batch:   batch 4 against batch 8, per token                            (expect the change, with its interval)
#   slow10:  the spin kernel 10% longer (llm_stages.py --spin-cycles)      (expect a regression of spin_kernel)
#   slow2:   the spin kernel 2% longer, --threshold 1                      (found when the noise floor allows;
#                                                                          refused, exit 2, when it does not)
# Every run: the kernlens tracer, discovery only (no ncu), a small llama (prompt 64, 4 decode
# steps), the measured region 5 times in one process. Stops starting runs after 5.5 minutes (each has a 120 s timeout).
# Needs build/devrun (scripts/device/make_devrun.sh). Writes OUT/compare_repeats.tar.gz.
#   scripts/device/compare_repeats.sh OUT
set -uo pipefail
out=$1
mkdir -p "$out"
work=$(mktemp -d)
export LD_LIBRARY_PATH=$PWD/build/devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
kl=build/devrun/kernlens
start=$SECONDS
spin=200000  # GPU cycles: about 0.1 ms at the H100's clocks, after every forward pass
summary=$work/summary.txt

# profile ID BATCH SPIN_CYCLES
profile() {
  if (( SECONDS - start > 330 )); then echo "$1 skipped (time)" | tee -a "$summary"; return; fi
  local t0=$SECONDS
  "$kl" profile --discovery tracer --discovery-only --repeat 5 --timeout 120 --out "$work/runs" --run-id "$1" --quiet \
    --tag model=llama --tag batch="$2" --tag prompt_tokens=64 --tag decode_steps=4 -- \
    python3 examples/workloads/llm_stages.py --model llama --batch "$2" --prompt 64 --decode-steps 4 \
    --spin-cycles "$3" > "$work/$1.report.txt" 2> "$work/$1.err"
  echo "profile $1 exit $? in $((SECONDS - t0)) s" | tee -a "$summary"
}

# compare NAME ARGS...: text, json and md of one comparison, with its exit code
compare() {
  local name=$1
  shift
  "$kl" compare "$@" > "$work/compare_$name.txt" 2> "$work/compare_$name.err"
  echo "compare $name exit $?" | tee -a "$summary"
  "$kl" compare "$@" --format json > "$work/compare_$name.json" 2>/dev/null
  "$kl" compare "$@" --format md > "$work/compare_$name.md" 2>/dev/null
  tail -n 1 "$work/compare_$name.txt" "$work/compare_$name.err" | tee -a "$summary"
}

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee -a "$summary"
for i in 1 2 3 4 5; do profile "a$i" 4 $spin; done
for i in 1 2 3 4 5; do profile "b$i" 4 $spin; done
for i in 1 2; do profile "batch8_$i" 8 $spin; done
for i in 1 2; do profile "slow10_$i" 4 $((spin * 110 / 100)); done
for i in 1 2; do profile "slow2_$i" 4 $((spin * 102 / 100)); done

r=$work/runs
have() { for d in "$@"; do [[ -f $r/$d/analysis.json ]] && echo "$r/$d"; done; }
A=$(have a1 a2 a3 a4 a5)
compare same $A --vs $(have b1 b2 b3 b4 b5)
compare same_one_run "$r/a1" --vs "$r/b1"
compare batch $A --vs $(have batch8_1 batch8_2)
compare slow10 $A --vs $(have slow10_1 slow10_2)
compare slow2 $A --vs $(have slow2_1 slow2_2) --threshold 1
compare slow2_one_run "$r/a1" --vs "$r/slow2_1" --threshold 1
echo "total $((SECONDS - start)) s" | tee -a "$summary"

tar -C "$work" -czf "$out/compare_repeats.tar.gz" .
ls -la "$out"
