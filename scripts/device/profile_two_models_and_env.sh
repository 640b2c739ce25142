#!/usr/bin/env bash
# One device call for issue 6: `kernlens profile` on two models (no baseline: its figures
# stand from the earlier run, same machine and commands), plus the environment facts the
# manifest probe reads (nvidia-smi, python/torch). Everything lands in OUT as two files.
#   scripts/device/profile_two_models_and_env.sh OUT
set -uo pipefail
out=$1
work=$(mktemp -d)
export LD_LIBRARY_PATH=$PWD/build/devrun/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
for model in llama qwen; do
  KERNLENS=build/devrun/kernlens BASELINE=0 scripts/device/profile_vs_ncu_baseline.sh "$work/v" "$model" prefill roofline
done
{
  echo "### nvidia-smi --query-gpu=name,driver_version,memory.total,uuid --format=csv,noheader"
  nvidia-smi --query-gpu=name,driver_version,memory.total,uuid --format=csv,noheader
  echo "### nvidia-smi --query-gpu=name,driver_version --format=csv"
  nvidia-smi --query-gpu=name,driver_version --format=csv
  echo "### nvidia-smi (head)"
  nvidia-smi | head -12
  echo "### python3 versions"
  python3 -c 'import sys, platform; print(sys.version); print(platform.python_version())'
  python3 -c 'import torch; print(torch.__version__); print(torch.version.cuda); print(torch.backends.cudnn.version())'
  echo "### ncu --version"
  ncu --version
  echo "### nvcc --version"
  nvcc --version
} > "$out/env_probe.txt" 2>&1
find "$work/v" -name "*.ncu-rep" -size +4M -delete
tar -C "$work" -czf "$out/validation.tar.gz" v
cat "$work"/v/*.summary.txt
