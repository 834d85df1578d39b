# Third-party dependencies, all from Debian 12 packages (see README "Dependencies").
#   libsqlite3-dev      results store
#   zlib1g-dev          gzip-compressed IDX files (Fashion-MNIST)
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

# No BLAS: the engine's CPU GEMMs are its own (src/engine/cpu/tiles_*.cpp), so
# results do not depend on which libopenblas a host has, nor on a second
# thread pool beside OpenMP's.

add_library(roofline_deps INTERFACE)
target_link_libraries(roofline_deps INTERFACE
  SQLite::SQLite3 ZLIB::ZLIB Threads::Threads OpenMP::OpenMP_CXX
  nlohmann_json::nlohmann_json CLI11::CLI11 fmt::fmt-header-only ${CMAKE_DL_LIBS})
