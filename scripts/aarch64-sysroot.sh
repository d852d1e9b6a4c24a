#!/usr/bin/env bash
# Makes the arm64 sysroot archbuild's aarch64 cross build links against:
# Debian bookworm's arm64 -dev packages of archbuild's dependencies (and
# their runtime libraries), unpacked with mmdebstrap into a folder. The host's
# own packages are left alone: nothing is installed for arm64 system-wide
# (libgit2-dev is not co-installable across architectures).
# Prints the sysroot's path. Made once per package list and reused.
set -euo pipefail

# The libraries of scripts/install-deps.sh that archbuild links (headers-only
# ones included: their CMake packages must come from the target's tree too),
# plus the C and C++ runtimes the cross compiler links against.
packages=(
  libc6-dev libstdc++-12-dev libgcc-12-dev
  libgit2-dev libspdlog-dev libtomlplusplus-dev
  libboost1.81-dev libboost-filesystem1.81-dev
  libcli11-dev nlohmann-json3-dev libzip-dev zlib1g-dev libzstd-dev liblz4-dev
  libssl-dev libcurl4-openssl-dev libgtest-dev
)
suite=bookworm
mirror=${ARCHBUILD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${ARCHBUILD_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

deps_dir=${ARCHBUILD_DEPS_DIR:-$HOME/.cache/archbuild-deps}
list_hash=$(printf '%s\n' "$suite" "${packages[@]}" | sha256sum | cut -c1-12)
sysroot=${1:-$deps_dir/sysroot-arm64-$suite-$list_hash}

if [[ -f $sysroot/.complete ]]; then
  echo "$sysroot"
  exit 0
fi
if [[ -e $sysroot ]]; then
  echo "aarch64-sysroot: $sysroot exists and is not a sysroot this script finished (no .complete in it):" \
       "remove it, or name another dir" >&2
  exit 2
fi
command -v mmdebstrap >/dev/null || { echo "aarch64-sysroot: mmdebstrap not found (scripts/install-deps.sh installs it)" >&2; exit 3; }
log=${TMPDIR:-/tmp}/archbuild-aarch64-sysroot.log
rm -rf "$sysroot.partial"
mkdir -p "$(dirname "$sysroot")"
include=$(IFS=,; echo "${packages[*]}")
# extract: unpack the packages without running their maintainer scripts, so
# no arm64 code runs and no emulator is needed.
if ! mmdebstrap --variant=extract --architectures=arm64 --include="$include" "$suite" "$sysroot.partial" \
     "deb $mirror $suite main" "deb $security_mirror $suite-security main" >"$log" 2>&1; then
  echo "aarch64-sysroot: mmdebstrap failed; last lines of $log:" >&2
  tail -n 20 "$log" | sed 's/^/  | /' >&2
  rm -rf "$sysroot.partial"
  exit 1
fi
touch "$sysroot.partial/.complete"
mv "$sysroot.partial" "$sysroot"
echo "$sysroot"
