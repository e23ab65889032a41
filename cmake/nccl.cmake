# cmake/nccl.cmake - the CUDA + NCCL backend.
#
# Included by the root CMakeLists.txt (include(cmake/nccl.cmake OPTIONAL)),
# after the library and test set-up and before the subdirectories.
#
# Finds the CUDA toolkit at $CUDA_HOME, else /usr/local/cuda: libcudart,
# cuda_runtime_api.h, libnccl and nccl.h (under the toolkit, or the system's
# libnccl-dev).  When found:
#   zoffload_nccl         static library: runtime/backend_nccl.c, linked
#                         PUBLIC to zoffload, libcudart and libnccl.
#                         libzoffload itself never depends on CUDA.
#   ZO_HAVE_MPI           defined for backend_nccl.c when MPI (C) is found
#                         (Debian: libopenmpi-dev); zo_backend_nccl_create_mpi
#                         then works, else it returns ZO_ERR_UNSUPPORTED.
#   test_backend_nccl     tests/nccl/test_backend_nccl.c (cmocka), ctest
#                         nccl/test_backend_nccl: without a GPU it asserts the
#                         clean ZO_ERR_NO_DEVICE; with one it runs the device
#                         tests.  Not under tests/unit/, whose glob links
#                         zoffload only.
#   nccl_bench            tests/nccl/nccl_bench.c: all-gather vs cudaMemcpyAsync
#                         D2D (run by tests/gpu/run.sh, not by ctest).
#   ZO_NCCL_FOUND         ON; ZO_CUBLAS_LIBRARY for examples/ (cuBLAS).
# When not found: one status line, nothing else.
#
# Cache: ZO_NCCL = AUTO (default: build when found) | ON (error when not
# found) | OFF (skip); ZO_NCCL_MPI = AUTO | OFF.

set(ZO_NCCL "AUTO" CACHE STRING "CUDA/NCCL backend: AUTO (build when found), ON (required), OFF")
set_property(CACHE ZO_NCCL PROPERTY STRINGS AUTO ON OFF)
set(ZO_NCCL_MPI "AUTO" CACHE STRING "MPI bootstrap of the NCCL backend: AUTO (when MPI is found) or OFF")
set_property(CACHE ZO_NCCL_MPI PROPERTY STRINGS AUTO OFF)

set(ZO_NCCL_FOUND OFF)

if(ZO_NCCL STREQUAL "OFF")
  message(STATUS "zoffload: NCCL backend disabled (ZO_NCCL=OFF)")
  return()
endif()

# The backend's logic on the host, with or without CUDA: runtime/backend_nccl.c
# compiled against the fake CUDA runtime and NCCL of tests/nccl/fake (one
# rank, immediate streams, controllable events and fault injection) and run
# by the same cmocka file: the device tests (FAKE_CUDA_NDEV=1) plus the
# fake-only protocol and error tests, and the no-device tests (=0).
if(BUILD_TESTING AND ZO_CMOCKA_TARGET AND EXISTS "${PROJECT_SOURCE_DIR}/tests/nccl/fake/fake_cuda.c")
  find_package(Threads REQUIRED)
  add_executable(test_backend_nccl_fake
    "${PROJECT_SOURCE_DIR}/tests/nccl/test_backend_nccl.c"
    "${PROJECT_SOURCE_DIR}/tests/nccl/mirror_backend.c"
    "${PROJECT_SOURCE_DIR}/tests/nccl/fake/fake_cuda.c"
    "${PROJECT_SOURCE_DIR}/runtime/backend_nccl.c")
  target_include_directories(test_backend_nccl_fake BEFORE PRIVATE "${PROJECT_SOURCE_DIR}/tests/nccl/fake")
  target_include_directories(test_backend_nccl_fake PRIVATE "${PROJECT_SOURCE_DIR}/runtime"
                                                            "${PROJECT_SOURCE_DIR}/tests/nccl")
  target_compile_definitions(test_backend_nccl_fake PRIVATE ZO_NCCL_FAKE=1)
  target_link_libraries(test_backend_nccl_fake PRIVATE zoffload ${ZO_CMOCKA_TARGET} Threads::Threads)
  add_test(NAME nccl/fake_device COMMAND test_backend_nccl_fake)
  add_test(NAME nccl/fake_no_device COMMAND test_backend_nccl_fake)
  set_tests_properties(nccl/fake_device PROPERTIES ENVIRONMENT "FAKE_CUDA_NDEV=3") # W = 1 tests + a world of 3
  set_tests_properties(nccl/fake_no_device PROPERTIES ENVIRONMENT "FAKE_CUDA_NDEV=0")
endif()

# fuzz_hooks through the NCCL data plane (tests/nccl/fuzz_hooks_nccl.c): the
# simulator's runtime gets the mirror backend, every gathered parameter of
# the NCCL backend is compared with the host backend's.  fuzz/ is added after
# this file, so the targets are declared at the end of the top-level
# directory (cmake_language DEFER), and only once fuzz/sim.h lets a caller
# wrap the simulator's host backend (zs_sim_opts.wrap_backend).
#   fuzz_hooks_nccl_replay, fuzz_hooks_nccl   real CUDA/NCCL (GPU script)
#   fuzz_hooks_nccl_fake_replay               the fake (every build): ctests
#                                             nccl/fake_replay_{seeds,regressions}
function(_zo_nccl_fuzz_targets)
  if(NOT TARGET zofuzz_core OR NOT EXISTS "${PROJECT_SOURCE_DIR}/fuzz/sim.h")
    return()
  endif()
  file(READ "${PROJECT_SOURCE_DIR}/fuzz/sim.h" _sim_h)
  if(NOT _sim_h MATCHES "wrap_backend")
    message(STATUS "zoffload: fuzz/sim.h has no zs_sim_opts.wrap_backend yet: "
                   "fuzz_hooks_nccl (corpus replay through NCCL) not built")
    return()
  endif()
  if(TARGET zo_nccl_mirror)
    add_executable(fuzz_hooks_nccl_replay "${PROJECT_SOURCE_DIR}/tests/nccl/fuzz_hooks_nccl.c"
                                          "${PROJECT_SOURCE_DIR}/fuzz/regression_driver.c")
    target_link_libraries(fuzz_hooks_nccl_replay PRIVATE zofuzz_core zo_nccl_mirror)
    if(ZO_FUZZ_ENGINE)
      add_executable(fuzz_hooks_nccl "${PROJECT_SOURCE_DIR}/tests/nccl/fuzz_hooks_nccl.c")
      target_link_libraries(fuzz_hooks_nccl PRIVATE zofuzz_core zo_nccl_mirror)
      zo_link_fuzz_engine(fuzz_hooks_nccl)
    endif()
  endif()
  if(BUILD_TESTING AND EXISTS "${PROJECT_SOURCE_DIR}/tests/nccl/fake/fake_cuda.c")
    find_package(Threads REQUIRED)
    add_executable(fuzz_hooks_nccl_fake_replay
      "${PROJECT_SOURCE_DIR}/tests/nccl/fuzz_hooks_nccl.c"
      "${PROJECT_SOURCE_DIR}/fuzz/regression_driver.c"
      "${PROJECT_SOURCE_DIR}/tests/nccl/mirror_backend.c"
      "${PROJECT_SOURCE_DIR}/tests/nccl/fake/fake_cuda.c"
      "${PROJECT_SOURCE_DIR}/runtime/backend_nccl.c")
    target_include_directories(fuzz_hooks_nccl_fake_replay BEFORE PRIVATE "${PROJECT_SOURCE_DIR}/tests/nccl/fake")
    target_include_directories(fuzz_hooks_nccl_fake_replay PRIVATE "${PROJECT_SOURCE_DIR}/runtime"
                                                                  "${PROJECT_SOURCE_DIR}/tests/nccl")
    target_compile_definitions(fuzz_hooks_nccl_fake_replay PRIVATE ZO_NCCL_FAKE=1)
    target_link_libraries(fuzz_hooks_nccl_fake_replay PRIVATE zofuzz_core Threads::Threads)
    foreach(_dir seeds regressions)
      if(IS_DIRECTORY "${PROJECT_SOURCE_DIR}/corpus/${_dir}/fuzz_hooks")
        add_test(NAME nccl/fake_replay_${_dir}
                 COMMAND fuzz_hooks_nccl_fake_replay "${PROJECT_SOURCE_DIR}/corpus/${_dir}/fuzz_hooks")
        # fast set: parameters above 64 KiB stay host-only and 64 KiB of each
        # is compared (the same comparison as the full set's on every
        # parameter that fits; the pattern fill and copies of larger
        # tensors cost seconds under ASan); the long set mirrors up to 4 MiB
        # per parameter; the GPU script does more
        set_tests_properties(nccl/fake_replay_${_dir} PROPERTIES
          ENVIRONMENT "FAKE_CUDA_NDEV=1;ZO_MIRROR_MAX_BYTES=65536;ZO_MIRROR_COMPARE_BYTES=65536;WORLD_SIZE=1;RANK=0;LOCAL_RANK=0")
        add_test(NAME nccl/fake_replay_${_dir}_full
                 COMMAND fuzz_hooks_nccl_fake_replay "${PROJECT_SOURCE_DIR}/corpus/${_dir}/fuzz_hooks")
        set_tests_properties(nccl/fake_replay_${_dir}_full PROPERTIES LABELS long
          ENVIRONMENT "FAKE_CUDA_NDEV=1;ZO_MIRROR_MAX_BYTES=4194304;ZO_MIRROR_COMPARE_BYTES=65536;WORLD_SIZE=1;RANK=0;LOCAL_RANK=0")
      endif()
    endforeach()
  endif()
endfunction()
if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.19)
  cmake_language(DEFER DIRECTORY "${PROJECT_SOURCE_DIR}" CALL _zo_nccl_fuzz_targets)
endif()

if(DEFINED ENV{CUDA_HOME} AND NOT "$ENV{CUDA_HOME}" STREQUAL "")
  set(ZO_CUDA_ROOT "$ENV{CUDA_HOME}")
else()
  set(ZO_CUDA_ROOT "/usr/local/cuda")
endif()

set(_zo_cuda_incs "${ZO_CUDA_ROOT}/include" "${ZO_CUDA_ROOT}/targets/${CMAKE_SYSTEM_PROCESSOR}-linux/include")
set(_zo_cuda_libs "${ZO_CUDA_ROOT}/lib64" "${ZO_CUDA_ROOT}/lib"
    "${ZO_CUDA_ROOT}/targets/${CMAKE_SYSTEM_PROCESSOR}-linux/lib")

find_path(ZO_CUDA_INCLUDE_DIR cuda_runtime_api.h PATHS ${_zo_cuda_incs} NO_DEFAULT_PATH)
find_library(ZO_CUDART_LIBRARY cudart PATHS ${_zo_cuda_libs} NO_DEFAULT_PATH)
# NCCL ships under the toolkit on this image; Debian's libnccl-dev puts it
# in the system directories.
find_path(ZO_NCCL_INCLUDE_DIR nccl.h PATHS ${_zo_cuda_incs})
find_library(ZO_NCCL_LIBRARY nccl PATHS ${_zo_cuda_libs})
find_library(ZO_CUBLAS_LIBRARY cublas PATHS ${_zo_cuda_libs} NO_DEFAULT_PATH)
mark_as_advanced(ZO_CUDA_INCLUDE_DIR ZO_CUDART_LIBRARY ZO_NCCL_INCLUDE_DIR ZO_NCCL_LIBRARY ZO_CUBLAS_LIBRARY)

if(NOT ZO_CUDA_INCLUDE_DIR OR NOT ZO_CUDART_LIBRARY OR NOT ZO_NCCL_INCLUDE_DIR OR NOT ZO_NCCL_LIBRARY)
  if(ZO_NCCL STREQUAL "ON")
    message(FATAL_ERROR "zoffload: ZO_NCCL=ON but CUDA/NCCL not found under ${ZO_CUDA_ROOT} "
                        "(cudart: ${ZO_CUDART_LIBRARY}, nccl: ${ZO_NCCL_LIBRARY}, nccl.h: ${ZO_NCCL_INCLUDE_DIR}); "
                        "set CUDA_HOME")
  endif()
  message(STATUS "zoffload: CUDA/NCCL not found, NCCL backend skipped")
  return()
endif()

set(ZO_NCCL_FOUND ON)

# Imported targets for the two libraries (headers as SYSTEM: -Wall -Wextra
# stay about our code).
if(NOT TARGET zo::cudart)
  add_library(zo::cudart UNKNOWN IMPORTED)
  set_target_properties(zo::cudart PROPERTIES
    IMPORTED_LOCATION "${ZO_CUDART_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ZO_CUDA_INCLUDE_DIR}"
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${ZO_CUDA_INCLUDE_DIR}")
  add_library(zo::nccl UNKNOWN IMPORTED)
  set_target_properties(zo::nccl PROPERTIES
    IMPORTED_LOCATION "${ZO_NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ZO_NCCL_INCLUDE_DIR}"
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${ZO_NCCL_INCLUDE_DIR}")
  if(ZO_CUBLAS_LIBRARY)
    add_library(zo::cublas UNKNOWN IMPORTED)
    set_target_properties(zo::cublas PROPERTIES
      IMPORTED_LOCATION "${ZO_CUBLAS_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${ZO_CUDA_INCLUDE_DIR}"
      INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${ZO_CUDA_INCLUDE_DIR}")
  endif()
endif()

file(STRINGS "${ZO_NCCL_INCLUDE_DIR}/nccl.h" _zo_nccl_ver REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
string(REGEX REPLACE "[^0-9;]" "" _zo_nccl_ver "${_zo_nccl_ver}")
string(REPLACE ";" "." _zo_nccl_ver "${_zo_nccl_ver}")

add_library(zoffload_nccl STATIC "${PROJECT_SOURCE_DIR}/runtime/backend_nccl.c")
target_include_directories(zoffload_nccl PRIVATE "${PROJECT_SOURCE_DIR}/runtime")
target_link_libraries(zoffload_nccl PUBLIC zoffload zo::cudart zo::nccl)
set_target_properties(zoffload_nccl PROPERTIES
  POSITION_INDEPENDENT_CODE ON
  PUBLIC_HEADER "${PROJECT_SOURCE_DIR}/include/zoffload_nccl.h")

set(_zo_mpi "no")
if(ZO_NCCL_MPI STREQUAL "AUTO")
  find_package(MPI QUIET COMPONENTS C)
  if(MPI_C_FOUND)
    target_compile_definitions(zoffload_nccl PRIVATE ZO_HAVE_MPI=1)
    target_link_libraries(zoffload_nccl PUBLIC MPI::MPI_C)
    set(_zo_mpi "yes (MPI ${MPI_C_VERSION}, ${MPIEXEC_EXECUTABLE})")
  endif()
endif()

install(TARGETS zoffload_nccl
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

message(STATUS "zoffload: NCCL backend enabled: CUDA ${ZO_CUDA_ROOT}, NCCL ${_zo_nccl_ver} "
               "(${ZO_NCCL_LIBRARY}), MPI bootstrap: ${_zo_mpi}")

if(BUILD_TESTING AND ZO_CMOCKA_TARGET AND EXISTS "${PROJECT_SOURCE_DIR}/tests/nccl/test_backend_nccl.c")
  add_executable(test_backend_nccl "${PROJECT_SOURCE_DIR}/tests/nccl/test_backend_nccl.c")
  target_include_directories(test_backend_nccl PRIVATE "${PROJECT_SOURCE_DIR}/runtime"
                                                        "${PROJECT_SOURCE_DIR}/tests/unit")
  target_link_libraries(test_backend_nccl PRIVATE zoffload_nccl ${ZO_CMOCKA_TARGET})
  find_package(Threads REQUIRED)
  target_link_libraries(test_backend_nccl PRIVATE Threads::Threads)
  add_test(NAME nccl/test_backend_nccl COMMAND test_backend_nccl)
  # ASan's shadow-gap protection breaks CUDA's address reservations on a
  # real GPU; append the documented workaround to the caller's options.
  if(ZO_SANITIZE AND CMAKE_VERSION VERSION_GREATER_EQUAL 3.22)
    set_tests_properties(nccl/test_backend_nccl PROPERTIES
      ENVIRONMENT_MODIFICATION "ASAN_OPTIONS=string_append::protect_shadow_gap=0")
  endif()
endif()

# MPI bootstrap under mpirun, 2 ranks: ZO_ERR_NO_DEVICE on every rank without
# enough GPUs, a checked all-gather and reduce-scatter with them.
if(BUILD_TESTING AND MPI_C_FOUND AND MPIEXEC_EXECUTABLE
   AND EXISTS "${PROJECT_SOURCE_DIR}/tests/nccl/mpi_check.c")
  add_executable(nccl_mpi_check "${PROJECT_SOURCE_DIR}/tests/nccl/mpi_check.c")
  target_link_libraries(nccl_mpi_check PRIVATE zoffload_nccl MPI::MPI_C)
  add_test(NAME nccl/mpi_check
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 --oversubscribe ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:nccl_mpi_check> ${MPIEXEC_POSTFLAGS})
  # Open MPI refuses root without these (containers, CI)
  set_tests_properties(nccl/mpi_check PROPERTIES TIMEOUT 120
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
  # Open MPI's components (dlopened) keep allocations past MPI_Finalize, which
  # LeakSanitizer reports; our own leaks are covered by test_backend_nccl.
  if(ZO_SANITIZE AND CMAKE_VERSION VERSION_GREATER_EQUAL 3.22)
    set_tests_properties(nccl/mpi_check PROPERTIES
      ENVIRONMENT_MODIFICATION "ASAN_OPTIONS=string_append::detect_leaks=0:protect_shadow_gap=0")
  endif()
endif()

if(EXISTS "${PROJECT_SOURCE_DIR}/tests/nccl/nccl_bench.c")
  add_executable(nccl_bench "${PROJECT_SOURCE_DIR}/tests/nccl/nccl_bench.c")
  target_link_libraries(nccl_bench PRIVATE zoffload_nccl)
endif()

# The mirror backend (host + NCCL, compared at every gather) for the tests.
add_library(zo_nccl_mirror STATIC "${PROJECT_SOURCE_DIR}/tests/nccl/mirror_backend.c")
target_include_directories(zo_nccl_mirror PUBLIC "${PROJECT_SOURCE_DIR}/tests/nccl")
target_link_libraries(zo_nccl_mirror PUBLIC zoffload_nccl)
if(TARGET test_backend_nccl)
  target_link_libraries(test_backend_nccl PRIVATE zo_nccl_mirror)
endif()
