#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this):
#   1. a build with warnings as errors, and every test (unit, golden, independent checks);
#   2. the same suite under AddressSanitizer + UndefinedBehaviorSanitizer (clang);
#   3. every libFuzzer harness of that same build for a bounded time (FUZZ_SECONDS each, default 12).
# CI runs it on two cores, where compiling is most of its time (BENCHMARKS.md, "CI time"), hence
# the build flags: no debug info in step 1 (it costs 30% of each compile), line tables only under
# the sanitizers (what their stack traces print), and two builds, not three.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

jobs=$(nproc)
started=$SECONDS
# Each step's heading says when it started, so that a CI log shows where its minutes went.
step() { printf '\n=== [%d:%02d] %s\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)) "$*"; }

step "build (warnings are errors)"
cmake -S . -B build/ci -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DKERNLENS_WERROR=ON
cmake --build build/ci -j "$jobs"
step "tests"
ctest --test-dir build/ci --output-on-failure -j "$jobs"

# One clang build serves the sanitizers and the fuzzers: everything is compiled once with ASan
# and UBSan (-O1, line tables; the module libraries and the harnesses with libFuzzer's coverage
# hooks too), the tests run from it, and so do the harnesses. (A separate GCC sanitizer build and
# fuzz build each cost about as long as step 1.)
clang=$(command -v clang++ || command -v clang++-14) || { echo "test.sh: clang++ not found" >&2; exit 2; }
step "build with AddressSanitizer + UndefinedBehaviorSanitizer and the libFuzzer harnesses ($clang)"
CXX=$clang cmake -S . -B build/sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DKERNLENS_SANITIZE=ON -DKERNLENS_BUILD_FUZZ=ON \
  -DKERNLENS_WERROR=ON -DKERNLENS_BUILD_BENCH=OFF
cmake --build build/sanitize -j "$jobs"
step "tests under the sanitizers"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/sanitize --output-on-failure -j "$jobs"

step "fuzzing (${FUZZ_SECONDS:-12} s per harness)"
FUZZ_SECONDS=${FUZZ_SECONDS:-12} FUZZ_BUILD=$PWD/build/sanitize FUZZ_CXX=$clang scripts/fuzz.sh
step "all tests passed"
