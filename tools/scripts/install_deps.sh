#!/usr/bin/env bash
# Installs every Debian package dsc needs to build and test. Idempotent: when all of them are
# already present it only checks and returns (well under a second).
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git python3
  python3-dev python3-pip python3-venv  # the Python package (tools/python): headers, pip for nanobind
  llvm-19-dev llvm-19-tools libz3-dev
  re2c bison
  libgtest-dev libgmock-dev
  libedit-dev libdlpack-dev libopenblas-dev nlohmann-json3-dev
  clang-19 libclang-rt-19-dev  # libFuzzer and the sanitizers for the parser fuzz run
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done

[ ${#missing[@]} -eq 0 ] && exit 0

echo "install_deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
