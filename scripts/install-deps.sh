#!/usr/bin/env bash
# Installs what archbuild needs, from Debian packages and PyPI. Idempotent:
# packages already present are not reinstalled.
#   scripts/install-deps.sh          what building and running archbuild needs
#   scripts/install-deps.sh --tests  that, and what the test suite needs too
#                                    (GoogleTest, servers, the aarch64 cross tools)
# Prints one line per step; apt-get's own output goes to $ARCHBUILD_DEPS_LOG
# (default: ${TMPDIR:-/tmp}/archbuild-install-deps.log), whose last lines are
# shown when a step fails.
set -euo pipefail

# Building archbuild, and what it runs when it builds a wheel (git, python's
# venv, setuptools and wheel for setup.py projects).
debian_packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libgit2-dev libspdlog-dev libtomlplusplus-dev
  libboost1.81-dev libboost-filesystem1.81-dev
  libcli11-dev nlohmann-json3-dev libzip-dev zlib1g-dev libzstd-dev liblz4-dev
  libssl-dev libcurl4-openssl-dev
  python3-venv python3-setuptools python3-wheel python3-pip
)
# Only the tests.
test_packages=(
  libgtest-dev clang-format
  redis-server  # the shared compiler cache's tests
  bubblewrap iproute2  # the compile cluster's tests: sccache-dist's sandbox, network namespaces
  nginx curl  # the remote cache's tests: the server in front of the bucket that pip and uv read
  g++-aarch64-linux-gnu qemu-user-static mmdebstrap  # the aarch64 cross build and its tests
)
case "${1:-}" in
  "") ;;
  --tests) debian_packages+=("${test_packages[@]}") ;;
  *)
    echo "install-deps: unknown argument '$1' (expected --tests)" >&2
    exit 2
    ;;
esac

log=${ARCHBUILD_DEPS_LOG:-${TMPDIR:-/tmp}/archbuild-install-deps.log}

# step DESCRIPTION COMMAND...: runs COMMAND with its output appended to the log;
# prints "install-deps: DESCRIPTION ... ok", or on failure the log's tail and
# exits with the command's status.
step() {
  local description=$1 status=0
  shift
  printf 'install-deps: %s ... ' "$description"
  echo "==> $description: $*" >>"$log"
  "$@" >>"$log" 2>&1 </dev/null || status=$?
  if ((status == 0)); then
    echo ok
    return 0
  fi
  echo "failed (exit $status)"
  echo "install-deps: last lines of $log:" >&2
  tail -n 30 "$log" | sed 's/^/  | /' >&2
  echo "install-deps: full log: $log" >&2
  exit "$status"
}

missing=()
for package in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done

if ((${#missing[@]})); then
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then
    sudo_cmd=(sudo)
    sudo -v  # asks for the password here, not in the middle of a step's line
  fi
  export DEBIAN_FRONTEND=noninteractive
  : >"$log"
  step "apt-get update" "${sudo_cmd[@]}" apt-get update -qq
  plural=s
  ((${#missing[@]} == 1)) && plural=
  step "installing ${#missing[@]} package$plural (${missing[*]})" \
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi

# CUPTI's headers, for archbuild's kernel-launch recorder (it loads libcupti
# at run time, so only the headers are needed to build). A toolkit that
# carries extras/CUPTI has them; otherwise they come from NVIDIA's own CUPTI
# wheel on PyPI (the version torch 2.11's cu130 wheels depend on), checked
# against its sha256 and unpacked into $ARCHBUILD_DEPS_DIR.
cupti_version=13.0.85
cupti_sha256=4eb01c08e859bf924d222250d2e8f8b8ff6d3db4721288cf35d14252a4d933c8
deps_dir=${ARCHBUILD_DEPS_DIR:-$HOME/.cache/archbuild-deps}
cupti_dir="$deps_dir/cupti-$cupti_version"
fetch_cupti_headers() {
  local scratch
  scratch=$(mktemp -d)
  echo "nvidia-cuda-cupti==$cupti_version --hash=sha256:$cupti_sha256" >"$scratch/requirements.txt"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --require-hashes -r "$scratch/requirements.txt" -d "$scratch/wheel"
  python3 -m zipfile -e "$scratch"/wheel/*.whl "$scratch/unpacked"
  mkdir -p "$deps_dir"
  rm -rf "$cupti_dir.partial"
  mv "$scratch/unpacked/nvidia/cu13" "$cupti_dir.partial"
  rm -rf "$cupti_dir.partial/lib"  # headers only
  mv "$cupti_dir.partial" "$cupti_dir"
  rm -rf "$scratch"
}
if [[ -f /usr/local/cuda/extras/CUPTI/include/cupti_callbacks.h ]]; then
  echo "install-deps: CUPTI headers from /usr/local/cuda/extras/CUPTI"
elif [[ -f $cupti_dir/include/cupti_callbacks.h ]]; then
  echo "install-deps: CUPTI headers present ($cupti_dir)"
else
  step "CUPTI $cupti_version headers from PyPI into $cupti_dir" fetch_cupti_headers
fi

if [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "install-deps: note: no CUDA toolkit at /usr/local/cuda; archbuild builds without it," \
       "but the tests that compile real kernels need nvcc" >&2
fi
