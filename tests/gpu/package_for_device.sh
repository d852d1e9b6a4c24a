#!/usr/bin/env bash
# Copies the archbuild binary built here, and the shared libraries it needs
# that the GPU machine's image lacks, into .device/ (ignored by git) so that a
# device run can `carry` it. Only for an x86-64 build machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $(uname -m) == x86_64 ]] || { echo "build on the device instead: this machine is $(uname -m)" >&2; exit 1; }
rm -rf .device && mkdir -p .device/bin .device/lib
cp build/src/archbuild .device/bin/
strip .device/bin/archbuild
# The kernel-launch recorder device validation loads into its checks: archbuild looks beside its binary.
cp build/src/libarchbuild_launch_recorder.so .device/bin/
ldd build/src/archbuild | awk '/=> \// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libgcc_s.so.*|libstdc++.so.*|ld-linux*|libpthread.so.*|libdl.so.*) ;;
    *) cp -L "$lib" .device/lib/ ;;
  esac
done
# ccache (the compiler launcher archbuild configures) and what it links, for
# the warm-rebuild measurements; the device image has none.
if command -v ccache >/dev/null; then
  cp "$(command -v ccache)" .device/bin/
  ldd "$(command -v ccache)" | awk '/=> \// {print $3}' | grep -E 'hiredis|zstd' | xargs -r -I{} cp -L {} .device/lib/
fi
# bubblewrap for the clean room (--portable), with what it links; the device image has none.
if command -v bwrap >/dev/null; then
  cp "$(command -v bwrap)" .device/bin/
  ldd "$(command -v bwrap)" | awk '/=> \// {print $3}' | grep -E 'selinux|libcap|pcre2' | xargs -r -I{} cp -L {} .device/lib/
fi
# A wheelhouse for the test-dependency check (the device machine reaches no index).
python3 -m pip download --quiet --no-deps --only-binary :all: -d .device/wheelhouse expecttest==0.3.0
cat > .device/bin/archbuild-wrapper <<'WRAP'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH="$here/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/archbuild" "$@"
WRAP
chmod +x .device/bin/archbuild-wrapper
du -sh .device
