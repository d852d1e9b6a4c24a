# Cross-builds archbuild for aarch64 Linux from an x86-64 Debian host with
# Debian's aarch64 cross compiler (g++-aarch64-linux-gnu) and an arm64
# sysroot of Debian's -dev packages (scripts/aarch64-sysroot.sh makes one).
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
#         -DARCHBUILD_AARCH64_SYSROOT=/path/to/sysroot
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT ARCHBUILD_AARCH64_SYSROOT)
  set(ARCHBUILD_AARCH64_SYSROOT "$ENV{ARCHBUILD_AARCH64_SYSROOT}")
endif()
if(NOT EXISTS "${ARCHBUILD_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
  message(FATAL_ERROR "no arm64 sysroot at '${ARCHBUILD_AARCH64_SYSROOT}': "
                      "run scripts/aarch64-sysroot.sh and pass -DARCHBUILD_AARCH64_SYSROOT=DIR")
endif()
# try_compile projects see the toolchain file again; pass the sysroot on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ARCHBUILD_AARCH64_SYSROOT)
set(CMAKE_SYSROOT "${ARCHBUILD_AARCH64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH "${ARCHBUILD_AARCH64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads the sysroot's .pc files, and prefixes their paths with it.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${ARCHBUILD_AARCH64_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
    "${ARCHBUILD_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${ARCHBUILD_AARCH64_SYSROOT}/usr/share/pkgconfig")

# Tests run under qemu-user with the sysroot as the loader's prefix.
find_program(ARCHBUILD_QEMU_AARCH64 qemu-aarch64-static qemu-aarch64)
if(ARCHBUILD_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${ARCHBUILD_QEMU_AARCH64};-L;${ARCHBUILD_AARCH64_SYSROOT}")
endif()
