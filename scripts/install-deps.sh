#!/usr/bin/env bash
# Installs everything archbuild needs to build and test, from Debian packages
# and PyPI. Idempotent: packages already present are not reinstalled.
set -euo pipefail

debian_packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libgit2-dev libspdlog-dev libtomlplusplus-dev
  libboost1.81-dev libboost-filesystem1.81-dev
  libcli11-dev nlohmann-json3-dev libzip-dev libzstd-dev liblz4-dev
  libssl-dev libgtest-dev
  python3-venv python3-setuptools python3-wheel python3-pip
  redis-server
)

missing=()
for package in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi

if [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "install-deps: note: no CUDA toolkit at /usr/local/cuda; archbuild builds without it," \
       "but the tests that compile real kernels need nvcc" >&2
fi
