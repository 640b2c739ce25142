#!/usr/bin/env bash
# One device call: `kernlens profile` and the whole-range ncu baseline for one model, in the
# same session (the program's start-up time varies between machines by 10 s and more).
#   scripts/device/profile_vs_ncu_baseline_same_session.sh OUT MODEL
set -uo pipefail
out=$1
model=$2
work=$(mktemp -d)
export LD_LIBRARY_PATH=$PWD/build/devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
STAMPS=$out/$model.stamps KERNLENS=build/devrun/kernlens scripts/device/profile_vs_ncu_baseline.sh "$work/v" "$model" prefill roofline
find "$work/v" -name "*.ncu-rep" -size +4M -delete
tar -C "$work" -czf "$out/$model.validation.tar.gz" v
