# Cross build for 64-bit ARM Linux (Jetson Orin's CPU) with Debian's
# gcc-aarch64-linux-gnu; the libraries come from Debian's arm64 multiarch
# (/usr/lib/aarch64-linux-gnu) and, for those that cannot be installed beside
# the host's, from Q8_AARCH64_SYSROOT (unpacked .debs: .ci/aarch64.sh).
# Tests and tools run under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR).
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=tools/cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)

set(Q8_AARCH64_SYSROOT "" CACHE PATH "unpacked arm64 packages (usr/lib/aarch64-linux-gnu, ...)")
# try_compile reads this file again in a project of its own: pass it on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES Q8_AARCH64_SYSROOT)
set(Q8_AARCH64_LIBDIRS /usr/lib/aarch64-linux-gnu)
if(Q8_AARCH64_SYSROOT)
  list(PREPEND Q8_AARCH64_LIBDIRS ${Q8_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu)
endif()

# pkg-config: the arm64 .pc files only, never the host's.
list(TRANSFORM Q8_AARCH64_LIBDIRS APPEND /pkgconfig OUTPUT_VARIABLE _q8_pc)
string(REPLACE ";" ":" _q8_pc "${_q8_pc}")
set(ENV{PKG_CONFIG_LIBDIR} "${_q8_pc}:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# The linker follows the libraries' own dependencies in these folders too.
string(REPLACE ";" ":" _q8_libs "${Q8_AARCH64_LIBDIRS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_q8_libs}")

# qemu-aarch64 finds the arm64 loader in /lib (libc6:arm64); the guest's
# LD_LIBRARY_PATH adds the unpacked libraries.
find_program(Q8_QEMU_AARCH64 qemu-aarch64)
if(Q8_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${Q8_QEMU_AARCH64} -E LD_LIBRARY_PATH=${_q8_libs})
endif()

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # protoc-c and python3 run on the host
