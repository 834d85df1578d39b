# Third-party dependencies, all from Debian 12 packages (see README "Dependencies").
#   libsqlite3-dev      results store
#   zlib1g-dev          gzip-compressed IDX files (Fashion-MNIST)
#   libopenblas-dev     CPU GEMM for the engine's fast CPU path
#   nlohmann-json3-dev  JSON output, trace files, the profiler's result files
#   libcli11-dev        command-line parsing
#   libfmt-dev          formatting (header-only use, so no runtime library to carry)
#   libgtest-dev        tests
# OpenMP comes with g++ (libgomp).
find_package(PkgConfig QUIET)
find_package(SQLite3 REQUIRED)
find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)

set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
find_path(CBLAS_INCLUDE_DIR NAMES cblas.h PATH_SUFFIXES openblas openblas-pthread
  PATHS /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu)
if(NOT CBLAS_INCLUDE_DIR)
  message(FATAL_ERROR "cblas.h not found: apt-get install libopenblas-dev")
endif()

add_library(roofline_deps INTERFACE)
target_link_libraries(roofline_deps INTERFACE
  SQLite::SQLite3 ZLIB::ZLIB Threads::Threads OpenMP::OpenMP_CXX
  nlohmann_json::nlohmann_json CLI11::CLI11 fmt::fmt-header-only ${BLAS_LIBRARIES} ${CMAKE_DL_LIBS})
target_include_directories(roofline_deps INTERFACE ${CBLAS_INCLUDE_DIR})
