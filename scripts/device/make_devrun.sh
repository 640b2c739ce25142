#!/usr/bin/env bash
# Copies a build's kernlens, libkernlens_tracer.so and the shared libraries the GPU machine's
# image may lack (every ldd dependency outside glibc and the C++ runtime) into BUILD/devrun/,
# the folder the scripts/device/*.sh scripts use. The device tool sends the working tree
# without build outputs, so carry the folder: `run(carry=["build/devrun"], ...)`.
#   scripts/device/make_devrun.sh [BUILD]          (default: build)
# PERF=1: also this machine's perf and the libraries it needs in BUILD/devrun/perf (the GPU
# machine has none; scripts/device/perf_profile.sh uses it), and nothing stripped, so that perf
# names the functions.
set -euo pipefail
build=${1:-build}
devrun=$build/devrun
rm -rf "$devrun"
mkdir -p "$devrun/lib"
cp "$build/kernlens" "$devrun/"
[[ -f $build/libkernlens_tracer.so ]] && cp "$build/libkernlens_tracer.so" "$devrun/"
# glibc, libstdc++ and libgcc are in every image newer than ours; everything else travels.
keep='^(linux-vdso|libc\.|libm\.|libdl\.|libpthread\.|librt\.|ld-linux|libstdc\+\+|libgcc_s|libcupti|libcuda\.)'
for bin in "$devrun"/kernlens "$devrun"/*.so; do
  [[ -f $bin ]] || continue
  ldd "$bin" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $keep ]] || cp -L "$path" "$devrun/lib/"
  done
done
# The threads-or-processes probe (scripts/device/threads_or_processes.sh), where it builds here.
if command -v g++ > /dev/null && [[ -f /usr/include/sqlite3.h ]]; then
  g++ -O2 -std=c++20 -pthread "$(dirname "$0")/threads_or_processes_probe.cpp" -lsqlite3 -o "$devrun/threads_or_processes_probe"
fi
if [[ ${PERF:-0} == 1 ]]; then
  perf=$(command -v perf) || { echo "make_devrun.sh: PERF=1 needs perf (Debian: linux-perf)" >&2; exit 2; }
  mkdir -p "$devrun/perf/lib"
  cp -L "$perf" "$devrun/perf/"
  ldd "$perf" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $keep ]] || cp -L "$path" "$devrun/perf/lib/"
  done
else
  strip --strip-unneeded "$devrun/kernlens" "$devrun/lib/"* 2>/dev/null || true
fi
du -sh "$devrun"
