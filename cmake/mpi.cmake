# cmake/mpi.cmake - the MPI backend: the CPU stand-in for
# multi-node NCCL.
#
# Included by the root CMakeLists.txt (include(cmake/mpi.cmake OPTIONAL))
# after cmake/nccl.cmake and before the subdirectories (tests/mpi uses the
# library).  Finds MPI for C the way cmake/nccl.cmake does for its bootstrap
# (FindMPI; Debian: libopenmpi-dev + openmpi-bin).  When found:
#   zoffload_mpi       static library: runtime/backend_mpi.c, linked PUBLIC to
#                      zoffload and MPI::MPI_C (libzoffload itself never
#                      depends on MPI).  Header include/zoffload_mpi.h.
#   ZO_MPI_FOUND       ON; tests/mpi registers its mpiexec tests then.
# When not found: one status line, nothing else.
#
# Cache: ZO_MPI = AUTO (default: build when found) | ON (error when not
# found) | OFF (skip).

set(ZO_MPI "AUTO" CACHE STRING "MPI backend (zoffload_mpi): AUTO (build when found), ON (required), OFF")
set_property(CACHE ZO_MPI PROPERTY STRINGS AUTO ON OFF)

set(ZO_MPI_FOUND OFF)

if(ZO_MPI STREQUAL "OFF")
  message(STATUS "zoffload: MPI backend disabled (ZO_MPI=OFF)")
  return()
endif()

if(NOT MPI_C_FOUND)
  find_package(MPI QUIET COMPONENTS C)
endif()
if(NOT MPI_C_FOUND)
  if(ZO_MPI STREQUAL "ON")
    message(FATAL_ERROR "zoffload: ZO_MPI=ON but no MPI C implementation was found "
                        "(apt-get install libopenmpi-dev openmpi-bin, or ./build.sh deps)")
  endif()
  message(STATUS "zoffload: MPI not found, MPI backend skipped")
  return()
endif()

set(ZO_MPI_FOUND ON)

add_library(zoffload_mpi STATIC "${PROJECT_SOURCE_DIR}/runtime/backend_mpi.c")
target_include_directories(zoffload_mpi PRIVATE "${PROJECT_SOURCE_DIR}/runtime")
target_link_libraries(zoffload_mpi PUBLIC zoffload MPI::MPI_C)
set_target_properties(zoffload_mpi PROPERTIES
  POSITION_INDEPENDENT_CODE ON
  PUBLIC_HEADER "${PROJECT_SOURCE_DIR}/include/zoffload_mpi.h")

install(TARGETS zoffload_mpi
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

message(STATUS "zoffload: MPI backend enabled: MPI ${MPI_C_VERSION} (${MPIEXEC_EXECUTABLE})")
