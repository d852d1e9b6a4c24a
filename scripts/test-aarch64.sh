#!/usr/bin/env bash
# Cross-builds archbuild for aarch64 (Debian's aarch64 cross compiler and an
# arm64 sysroot of Debian's packages) into ./build-aarch64 and runs its unit
# tests and the CLI tests listed below under qemu-user. The aarch64 binary
# runs the host's tools (python3, git, nvcc) as a user's would run the
# aarch64 ones.
#
# The tests exec the aarch64 binary (and archbuild re-executes itself for a
# build step), so the kernel must hand aarch64 ELF files to qemu: binfmt_misc.
# Where no aarch64 handler is registered and this runs as root, the one
# Debian's qemu-user-static ships is registered for the run and removed after
# (as systemd would register it at install). Without either, the tests are
# skipped with the reason (exit 0), the build still runs.
# Extra arguments go to ctest (the CLI modules); the unit tests run as one
# process and write build-aarch64/unit-results.xml.
set -euo pipefail
cd "$(dirname "$0")/.."

# What the aarch64 binary must prove beyond the x86-64 run: every unit test
# (the parsers, tables and plans, compiled for aarch64: char signedness,
# alignment, the sysroot's libraries), and the CLI modules whose behaviour
# depends on the machine or on native code only this binary runs: detect and
# the aarch64 tables (test_host_machine), resolving archs (test_arch),
# reading real nvcc fatbins with the aarch64 decompressors (test_inspect),
# libgit2 checkouts, refs, mirrors and submodules (test_source.Source), and
# whole builds of the fixture project (test_build.Build: the plan, the log
# and trace, the cache, the offline step, the step supervisor in its PID
# namespace, interrupts). Not here: the build options and failures
# (test_build.BuildOptions), patches, local paths and recipes
# (test_source's other classes): the same code on both machines, which the
# unit tests run here; the modules that exercise the same
# code paths through x86-64 tools (nvcc builds of extensions, servers, the
# real torch wheels, which the x86-64 run reads for both machines), the
# option and input checks that are the same code on both (hostile inputs,
# settings, logging, recipes, doctor's tables; their unit tests run here),
# and test_step_supervisor (its plain-user mode needs
# PR_SET_CHILD_SUBREAPER, which qemu-user does not pass to the kernel; the
# root mode runs within test_build). And the wheel audit of aarch64 wheels
# (test_wheel_audit.AarchWheelAudit: linux_aarch64 vs manylinux_*_aarch64,
# a library only the builder has named).
cli_tests=(test_arch test_host_machine test_inspect test_source.Source test_build.Build
  test_wheel_audit.AarchWheelAudit)

bash scripts/install-deps.sh --tests
sysroot=$(bash scripts/aarch64-sysroot.sh)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# One compile per 16 sources (a unity build) and the Quick build type (-O1
# without debug info), as the x86-64 build: a fifth of the cost of a
# file-by-file RelWithDebInfo one.
cmake -S . -B build-aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
  -DARCHBUILD_AARCH64_SYSROOT="$sysroot" -DCMAKE_BUILD_TYPE=Quick \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 "${launcher[@]}" \
  -DARCHBUILD_WERROR="${ARCHBUILD_WERROR:-OFF}" >/dev/null
cmake --build build-aarch64 --parallel --target archbuild archbuild_unit_tests

binfmt=/proc/sys/fs/binfmt_misc
handler=$binfmt/qemu-aarch64
handler_enabled() { [[ -r $handler ]] && grep -qx enabled "$handler"; }
if [[ ! -e $handler ]]; then
  if [[ $(id -u) -eq 0 && ! -e $binfmt/register ]]; then
    mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null || true
  fi
  if [[ -w $binfmt/register && -f /usr/lib/binfmt.d/qemu-aarch64.conf ]] &&
     cat /usr/lib/binfmt.d/qemu-aarch64.conf 2>/dev/null >"$binfmt/register"; then
    # Removed on exit: only the handler this run registered, and only while it is there.
    trap '[[ -e $handler ]] && echo -1 >"$handler" 2>/dev/null; true' EXIT
  fi
fi
if ! handler_enabled; then
  echo "test-aarch64: SKIPPED the aarch64 tests: no enabled binfmt_misc handler for aarch64 and none can be" \
       "registered here (needs root and binfmt_misc); the aarch64 build itself succeeded" >&2
  exit 0
fi

# qemu finds the aarch64 loader and libraries in the sysroot.
export QEMU_LD_PREFIX=$sysroot
file_type=$(od -An -tx1 -j18 -N2 build-aarch64/src/archbuild | tr -d ' ')
[[ $file_type == b700 ]] || { echo "test-aarch64: build-aarch64/src/archbuild is not an aarch64 ELF file" >&2; exit 1; }
status=0
# The unit tests in one process: under qemu-user, starting the 421-test binary
# once per test (as ctest does) costs five times the tests themselves.
unit_results=$PWD/build-aarch64/unit-results.xml
rm -f "$unit_results"
(cd build-aarch64/tests && ./archbuild_unit_tests --gtest_brief=1 --gtest_output="xml:$unit_results") || status=1
pattern="^cli\\.($(IFS='|'; echo "${cli_tests[*]//./\\.}"))\$"
cd build-aarch64
ctest --output-on-failure --timeout 1500 -j "${ARCHBUILD_TEST_JOBS:-$(($(nproc) + 1))}" -LE gpu -R "$pattern" "$@" || status=1
exit "$status"
