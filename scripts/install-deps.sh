#!/usr/bin/env bash
# Installs, from Debian's packages, what kernlens needs to build and test — only what is
# missing. Safe to run again. Uses sudo when not run as root.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git   # toolchain
  libfmt-dev libcli11-dev nlohmann-json3-dev zlib1g-dev libre2-dev  # libraries
  libsimdjson-dev                                     # PyTorch trace (JSON) reader
  libisal-dev                                         # gzip inflation (ISA-L igzip)
  libdeflate-dev                                      # bench_inflate's peer only
  libsqlite3-dev                                      # Nsight Systems SQLite exports
  libutfcpp-dev                                       # invalid UTF-8 in names repaired
  libxxhash-dev                                       # run keys (XXH3)
  libtomlplusplus-dev                                 # sweep files (kernlens sweep)
  llvm-dev                                            # LLVM's demangler (LLVMDemangle)
  libgtest-dev libbenchmark-dev python3 time          # tests, benchmarks, independent checks
  python3-jsonschema                                  # the JSON schema check
  clang lld                                           # libFuzzer harnesses, the sanitizer build's linker
  chromium                                            # the HTML report checked in a real browser
  slurm-wlm munge                                     # the sweep test's one-node Slurm cluster
  help2man                                            # the man page, from --help
  pybind11-dev python3-dev                            # the Python module
  python3-pytest python3-pandas python3-matplotlib    # its tests and docs/python.md's example
)

missing() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

run_apt() {
  if [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get "$@"
  else
    sudo DEBIAN_FRONTEND=noninteractive apt-get "$@"
  fi
}

install() {
  local need
  need=$(missing "$@")
  [ -z "$need" ] && return 0
  echo "kernlens: installing $(echo $need | tr '\n' ' ')" >&2
  # shellcheck disable=SC2086
  if ! run_apt install -y -q --no-install-recommends $need; then
    run_apt update -q
    # shellcheck disable=SC2086
    run_apt install -y -q --no-install-recommends $need
  fi
}

install "${packages[@]}"
# libFuzzer's runtime ships with the clang version Debian chose as default.
clang_major=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
install "libclang-rt-${clang_major}-dev"
