#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this):
#   1. a build with warnings as errors, and every test (unit, golden, independent checks);
#   2. the same suite under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. every libFuzzer harness for a bounded time (FUZZ_SECONDS each, default 12).
# CI runs it on two cores within 20 minutes; compiling is most of that, hence the build flags:
# no debug info in step 1 (it costs 30% of each compile), line tables only under the sanitizers
# (what their stack traces print).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

jobs=$(nproc)
step() { printf '\n=== %s\n' "$*"; }

step "build (warnings are errors)"
cmake -S . -B build/ci -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DKERNLENS_WERROR=ON
cmake --build build/ci -j "$jobs"
step "tests"
ctest --test-dir build/ci --output-on-failure -j "$jobs"

step "build with AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1" -DKERNLENS_SANITIZE=ON \
  -DKERNLENS_WERROR=ON -DKERNLENS_BUILD_BENCH=OFF
cmake --build build/asan -j "$jobs"
step "tests under the sanitizers"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j "$jobs"

step "fuzzing (${FUZZ_SECONDS:-12} s per harness)"
FUZZ_SECONDS=${FUZZ_SECONDS:-12} scripts/fuzz.sh
step "all tests passed"
