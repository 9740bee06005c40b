# External dependencies, all from Debian packages (see tools/scripts/install_deps.sh).

# Z3 ships no CMake package on Debian; find its header and library directly.
find_path(Z3_INCLUDE_DIR z3++.h REQUIRED)
find_library(Z3_LIBRARY z3 REQUIRED)
add_library(dsc_z3 INTERFACE)
target_include_directories(dsc_z3 SYSTEM INTERFACE ${Z3_INCLUDE_DIR})
target_link_libraries(dsc_z3 INTERFACE ${Z3_LIBRARY})

# LLVM 19 (llvm-19-dev). The CPU backend links it; the foundation only checks it is there.
find_package(LLVM REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
if(NOT LLVM_VERSION_MAJOR EQUAL 19)
  message(FATAL_ERROR "dsc needs LLVM 19 (llvm-19-dev); found ${LLVM_PACKAGE_VERSION} at ${LLVM_DIR}")
endif()
message(STATUS "dsc: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
add_library(dsc_llvm INTERFACE)
target_include_directories(dsc_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_compile_definitions(dsc_llvm INTERFACE ${LLVM_DEFINITIONS})
# Debian builds LLVM as one shared library; linking it is much faster than the components.
target_link_libraries(dsc_llvm INTERFACE LLVM)

find_package(GTest REQUIRED)

# lit and FileCheck come with llvm-19-tools.
find_program(DSC_FILECHECK FileCheck HINTS ${LLVM_TOOLS_BINARY_DIR} REQUIRED)
find_file(DSC_LIT lit.py HINTS /usr/lib/llvm-19/build/utils/lit REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

# OpenBLAS (libopenblas-dev) through its CBLAS interface: the runtime's sgemm.
find_path(OPENBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas REQUIRED)
find_library(OPENBLAS_LIBRARY openblas REQUIRED)
add_library(dsc_blas INTERFACE)
target_include_directories(dsc_blas SYSTEM INTERFACE ${OPENBLAS_INCLUDE_DIR})
target_link_libraries(dsc_blas INTERFACE ${OPENBLAS_LIBRARY})
