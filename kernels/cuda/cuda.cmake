# The CUDA backend, included by the top-level CMakeLists.txt with -DQ8_CUDA=ON.
#
#  - kernels/cuda/*.cu: the kernels (CUDA C, one op per file), in the static
#    library q8cuda_kernels, with their own flags (the top-level warning
#    options are C compiler options, not nvcc's);
#  - kernels/cuda/*.c (the backend, plans, the cuBLASLt wrapper):
#    C code compiled into libq8 with the usual warnings;
#  - cuBLASLt linked dynamically, the CUDA runtime statically. Lazy module
#    loading is the runtime's default (CUDA_MODULE_LOADING); q8 does not
#    force eager loading.
#
# CMAKE_CUDA_ARCHITECTURES defaults to 87;90 (Jetson Orin, Hopper); override
# it with -DCMAKE_CUDA_ARCHITECTURES=... (e.g. 80, 86, 89).

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
  set(CMAKE_CUDA_ARCHITECTURES "87;90" CACHE STRING "CUDA architectures to build for" FORCE)
endif()
if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
message(STATUS "q8: CUDA backend, nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")

set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)

file(GLOB Q8_CUDA_KERNELS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/cuda/*.cu)
file(GLOB Q8_CUDA_C CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/cuda/*.c)

add_library(q8cuda_kernels STATIC ${Q8_CUDA_KERNELS})
# Not the directory's C warning flags: nvcc would reject them.
set_property(TARGET q8cuda_kernels PROPERTY COMPILE_OPTIONS "")
target_include_directories(q8cuda_kernels PRIVATE ${CMAKE_SOURCE_DIR}/kernels/cuda
  ${CMAKE_SOURCE_DIR}/kernels/common ${CMAKE_SOURCE_DIR}/src/core) # src/core: half.h
target_link_libraries(q8cuda_kernels PUBLIC CUDA::cudart_static)
# --fmad=false: no FMA contraction, so float kernels round like the CPU code
# (the INT8 epilogue and QuantizeLinear are bit-exact either way).
# -lineinfo: compute-sanitizer and Nsight name the source line of a kernel
# (no effect on the code generated).
target_compile_options(q8cuda_kernels PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false -lineinfo -Xcompiler=-Wall,-Wextra,-Wno-unused-parameter,-Wno-unused-function>
  $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CONFIG:Release>>:-O3>)
if(Q8_SANITIZE) # the kernels' host code (the emulation) is checked too
  target_compile_options(q8cuda_kernels PRIVATE
    "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fsanitize=address;-Xcompiler=-fsanitize=undefined;-Xcompiler=-fno-sanitize-recover=undefined;-Xcompiler=-fno-omit-frame-pointer>")
endif()
if(Q8_WERROR)
  target_compile_options(q8cuda_kernels PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
endif()

target_sources(q8 PRIVATE ${Q8_CUDA_C})
# libq8 and libq8tools were created before CUDA was enabled; they link CUDA code.
set_property(TARGET q8 q8tools PROPERTY CUDA_ARCHITECTURES ${CMAKE_CUDA_ARCHITECTURES})
target_include_directories(q8 PRIVATE ${CMAKE_SOURCE_DIR}/kernels/cuda)
list(APPEND Q8_INTERNAL_INCLUDES ${CMAKE_SOURCE_DIR}/kernels/cuda) # tests: backend_cuda.h
# CUDA's headers are not written for -Wstrict-prototypes: include them as
# system headers so that -Werror applies to q8's own code only.
target_include_directories(q8 SYSTEM PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(q8 PRIVATE Q8_HAVE_CUDA=1) # read by src/core/registry.c only
# cuBLASLt is not linked: kernels/cuda/lt_load.c loads it on first use (linked,
# it costs every process ~210 MB of resident memory from the start).
target_link_libraries(q8 PUBLIC q8cuda_kernels CUDA::cudart_static ${CMAKE_DL_LIBS})
set_property(SOURCE ${CMAKE_SOURCE_DIR}/kernels/cuda/lt_load.c APPEND PROPERTY
  COMPILE_DEFINITIONS Q8_CUBLASLT_DIR="${CUDAToolkit_LIBRARY_DIR}")

# The q8 side of the INT8 GEMM benchmark (tools/bench/gpu_igemm_bench.c).
if(EXISTS ${CMAKE_SOURCE_DIR}/tools/bench/gpu_igemm_bench.c)
  add_executable(gpu_igemm_bench tools/bench/gpu_igemm_bench.c)
  target_include_directories(gpu_igemm_bench PRIVATE ${Q8_RUNTIME_INCLUDES}
    ${CMAKE_SOURCE_DIR}/kernels/cuda)
  target_link_libraries(gpu_igemm_bench PRIVATE q8)
endif()
