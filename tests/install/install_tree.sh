#!/usr/bin/env bash
# install_tree.sh BUILD_DIR WORK_DIR [PYTHON]: `cmake --install` into WORK_DIR/prefix, move the
# tree to WORK_DIR/moved (so no path compiled into the binary points at it), and run demo,
# analyze and report from an empty directory with the source tree's data out of reach; with
# PYTHON (the module was built), import the installed module through its .pth and load a run.
set -euo pipefail
build=$1 work=$2 python=${3:-}
rm -rf "$work" && mkdir -p "$work/cwd"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
mv "$work/prefix" "$work/moved"
p=$work/moved
export KERNLENS_NO_SOURCE_DATA=1
fail() { echo "install_tree: $*" >&2; exit 1; }

[ -x "$p/bin/kernlens" ] || fail "no bin/kernlens"
for f in kernel_rules.txt gpu_peaks.txt schema/kernlens.analysis-1.schema.json examples/runs/llama_prefill/manifest.json; do
  [ -f "$p/share/kernlens/$f" ] || fail "no share/kernlens/$f"
done
if command -v help2man >/dev/null; then
  grep -q "kernlens" "$p/share/man/man1/kernlens.1" || fail "no man page"
  grep -q "^\.SH" "$p/share/man/man1/kernlens.1" || fail "the man page has no sections"
fi

cd "$work/cwd"
"$p/bin/kernlens" demo -o demo.html >demo.txt || fail "demo failed: $(cat demo.txt)"
grep -q "$p/share/kernlens/examples/runs/mixtral_moe_tracer" demo.txt || fail "demo did not read the installed data: $(head -3 demo.txt)"
grep -q "<html" demo.html || fail "demo wrote no HTML report"
"$p/bin/kernlens" analyze "$p/share/kernlens/examples/runs/llama_prefill" --format json -o analysis.json
grep -q '"schema": *"kernlens.analysis/1"' analysis.json || fail "analyze wrote no analysis: $(head -c 300 analysis.json)"
"$p/bin/kernlens" report "$p/share/kernlens/examples/runs/llama_prefill" -o report.html
grep -q "<html" report.html || fail "report wrote no HTML"

# Without the installed data and the source tree's, demo fails with a clear error, not a crash.
mv "$p/share/kernlens/examples" "$p/share/kernlens/examples.away"
set +e
"$p/bin/kernlens" demo -o gone.html 2>err.txt
rc=$?
set -e
mv "$p/share/kernlens/examples.away" "$p/share/kernlens/examples"
[ "$rc" -eq 2 ] || fail "demo without data exited $rc, not 2: $(cat err.txt)"
grep -q "kernlens: error:" err.txt || fail "demo without data: no error message: $(cat err.txt)"

if [ -n "$python" ]; then
  [ -f "$p/lib/python3/dist-packages/kernlens/__init__.py" ] || fail "no Python module in lib/python3/dist-packages"
  site_dir=$(echo "$p"/lib/python3.*/dist-packages)
  "$python" -c "
import site, sys
site.addsitedir(sys.argv[1])  # as Python does for /usr/local/lib/python3.X/dist-packages
import kernlens
assert kernlens.__file__.startswith(sys.argv[2]), kernlens.__file__
run = kernlens.load(sys.argv[2] + '/../../../share/kernlens/examples/runs/llama_prefill')
print(run.kernels.head())
assert len(run.kernels) == 27
" "$site_dir" "$p/lib/python3/dist-packages" >python.txt || fail "the installed Python module: $(cat python.txt)"
fi
echo "install_tree: ok ($p)"
