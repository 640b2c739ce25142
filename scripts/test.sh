#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this):
#   1. a Release build (GCC) with warnings as errors, everything the tests use included, and the
#      tests of what it built: golden outputs, CLI and Python checks, independent totals, the
#      scanners' portable path, sweeps, the install; not the GoogleTest unit tests (label
#      "unit"; it builds only their readers' binary, kernlens_reader_tests) nor the mutation
#      campaign, which step 2 runs, but for ParallelRead.* (label "parallel_read", in the same
#      ctest call), whose corpus tests read every case here and a sample under the sanitizers;
#   2. every test but the "orchestration" ones (a browser on the report, the sweep driver with
#      fake Slurm: step 1 runs them), under AddressSanitizer + UndefinedBehaviorSanitizer (clang),
#      the unit tests in shards of a process each (tests/CMakeLists.txt);
#   3. every libFuzzer harness of that same build for a bounded time (FUZZ_SECONDS each, default 5).
# CI runs it on two cores, where compiling is most of its time (BENCHMARKS.md, "CI time"), hence
# the build flags: unity builds (CMakeLists.txt), no debug info in step 1 (it costs 30% of each
# compile), line tables only under the sanitizers (what their stack traces print), the unit
# tests' own code at -O0 but for the ParallelRead tests' (tests/CMakeLists.txt), and two
# builds, not three. Every test runs at least once, under the sanitizers where that checks
# something; step 1's tests check its binaries as users get them. UNIT_TESTS_TOO=1 builds and
# runs every unit test in step 1 as well (and compiles them optimized there).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

jobs=$(nproc)
started=$SECONDS

# The tests start python3 hundreds of times (stand-in programs, the fake ncu, the environment
# probe). Where python3 on PATH is a version manager's shim (pyenv's: 0.5 s a start on a 2-vCPU
# machine against 0.05 s), they run the interpreter it picks, directly: the same python.
python=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
if [[ -n $python && $(command -v python3) != "$python" ]]; then
  mkdir -p build/python3-direct && ln -sf "$python" build/python3-direct/python3
  export PATH=$PWD/build/python3-direct:$PATH
fi
# Each step's heading says when it started, so that a CI log shows where its minutes went.
step() { printf '\n=== [%d:%02d] %s\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)) "$*"; }

step "build (warnings are errors)"
unit_test_options=-O0 unit_tests=readers
if [[ ${UNIT_TESTS_TOO:-0} == 1 ]]; then unit_test_options= unit_tests=all; fi
cmake -S . -B build/ci -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DKERNLENS_WERROR=ON -DKERNLENS_UNIT_TEST_OPTIONS="$unit_test_options" -DKERNLENS_UNIT_TESTS=$unit_tests
cmake --build build/ci -j "$jobs"
if [[ ${UNIT_TESTS_TOO:-0} == 1 ]]; then
  step "tests"
  ctest --test-dir build/ci --output-on-failure -j "$jobs"
else
  step "tests but the unit tests and the mutation campaign (step 2 runs them); ParallelRead.* whole"
  ctest --test-dir build/ci --output-on-failure -j "$jobs" --label-exclude '^unit$' --exclude-regex '^mutation_campaign$'
fi

# One clang build serves the sanitizers and the fuzzers: everything is compiled once with ASan
# and UBSan (-O1, line tables; the module libraries and the harnesses with libFuzzer's coverage
# hooks too), the tests run from it, and so do the harnesses. (A separate GCC sanitizer build and
# fuzz build each cost about as long as step 1.)
clang=$(command -v clang++ || command -v clang++-14) || { echo "test.sh: clang++ not found" >&2; exit 2; }
step "build with AddressSanitizer + UndefinedBehaviorSanitizer and the libFuzzer harnesses ($clang)"
# Linked by lld where it is installed (install-deps.sh installs it): the instrumented binaries
# with their line tables took GNU ld 6.4 s for the unit tests, lld 2.2 s, and there are 16 of them.
link_options=()
if command -v ld.lld > /dev/null; then link_options=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld); fi
CXX=$clang cmake -S . -B build/sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DKERNLENS_SANITIZE=ON -DKERNLENS_BUILD_FUZZ=ON \
  -DKERNLENS_WERROR=ON -DKERNLENS_BUILD_BENCH=OFF -DKERNLENS_UNIT_TEST_OPTIONS=-O0 "${link_options[@]}"
cmake --build build/sanitize -j "$jobs"
step "tests under the sanitizers"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/sanitize --output-on-failure -j "$jobs" --label-exclude orchestration

step "fuzzing (${FUZZ_SECONDS:-5} s per harness)"
FUZZ_SECONDS=${FUZZ_SECONDS:-5} FUZZ_BUILD=$PWD/build/sanitize FUZZ_CXX=$clang scripts/fuzz.sh
step "all tests passed"
