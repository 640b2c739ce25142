#!/usr/bin/env bash
# cpp_consumer.sh BUILD_DIR WORK_DIR SOURCE_DIR: installs into WORK_DIR/prefix, builds
# examples/cpp against it with find_package(kernlens), and again with pkg-config, and runs both.
set -euo pipefail
build=$1 work=$2 src=$3
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
fail() { echo "cpp_consumer: $*" >&2; exit 1; }
run=$src/examples/data/runs/llama_prefill

cmake -S "$src/examples/cpp" -B "$work/example" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/configure.log" ||
  fail "configure failed: $(tail -20 "$work/configure.log")"
cmake --build "$work/example" >"$work/build.log" || fail "build failed: $(tail -20 "$work/build.log")"
"$work/example/top_kernels" "$run" >"$work/out.txt"
grep -q "top kernel" "$work/out.txt" || fail "no summary: $(cat "$work/out.txt")"
grep -Eq "launch records: [1-9]" "$work/out.txt" || fail "no launches: $(cat "$work/out.txt")"

# Bad input: the API's error with its file, not a crash.
printf 'not,a,profile\n1,2\n' >"$work/bad.csv"
set +e
"$work/example/top_kernels" "$work/bad.csv" 2>"$work/err.txt"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "bad input exited $rc: $(cat "$work/err.txt")"
grep -q "file '$work/bad.csv'" "$work/err.txt" || fail "the error names no file: $(cat "$work/err.txt")"

# pkg-config
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
# shellcheck disable=SC2046
c++ -o "$work/top_kernels_pc" "$src/examples/cpp/top_kernels.cpp" $(pkg-config --cflags --libs kernlens) \
  -Wl,-rpath,"$work/prefix/lib"
"$work/top_kernels_pc" "$run" | grep -q "top kernel" || fail "the pkg-config build does not run"
echo "cpp_consumer: ok"
