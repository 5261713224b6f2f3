# Cross-compiling for linux-arm64 on a Debian amd64 machine with Debian's multiarch toolchain: crossbuild-essential-
# arm64 and the -dev:arm64 packages (scripts/install-deps.sh --cross-arm64); `ARCH=arm64 scripts/package.sh` uses
# this file. The arm64 libraries live beside the host's in /usr/lib/aarch64-linux-gnu: CMAKE_LIBRARY_ARCHITECTURE
# makes find_* look there, and pkg-config reads only the arm64 .pc files. TRAINPACK_CROSS_PREFIX (optional) is a
# directory of arm64 packages unpacked by dpkg -x, for those Debian cannot install beside their amd64 version
# (libisal: scripts/cross-prefix.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(TRAINPACK_CROSS_PREFIX "" CACHE PATH "arm64 packages unpacked with dpkg -x (their usr/ tree)")
# try_compile reads this file again in the same process: without the prefix it would reset PKG_CONFIG_LIBDIR.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TRAINPACK_CROSS_PREFIX)
set(CMAKE_FIND_ROOT_PATH / ${TRAINPACK_CROSS_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Runs what the build itself executes (the man page is printed by the built binary): Debian's qemu-user, with the
# arm64 loader and libraries of multiarch (/lib/ld-linux-aarch64.so.1) and those of the prefix.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
if(TRAINPACK_CROSS_PREFIX)
  list(APPEND CMAKE_CROSSCOMPILING_EMULATOR -E LD_LIBRARY_PATH=${TRAINPACK_CROSS_PREFIX}/usr/lib/aarch64-linux-gnu)
endif()

set(_pc_dirs /usr/lib/aarch64-linux-gnu/pkgconfig /usr/share/pkgconfig)
if(TRAINPACK_CROSS_PREFIX)
  list(PREPEND _pc_dirs ${TRAINPACK_CROSS_PREFIX}/usr/lib/aarch64-linux-gnu/pkgconfig)
endif()
list(JOIN _pc_dirs ":" _pc_libdir)
set(ENV{PKG_CONFIG_LIBDIR} "${_pc_libdir}")
set(ENV{PKG_CONFIG_PATH} "")
