# Third-party dependencies, all from Debian 12 packages (see README "Dependencies").
#   libsqlite3-dev      results store
#   zlib1g-dev          gzip-compressed IDX files (Fashion-MNIST)
#   nlohmann-json3-dev  JSON output, trace files, the profiler's result files
#   libcli11-dev        command-line parsing
#   libfmt-dev          formatting (header-only use, so no runtime library to carry)
#   libgtest-dev        tests
#   libturbojpeg0-dev   JPEG decoding for ImageFolder data (linked statically: the GPU
#                       machine has no libturbojpeg.so)
# OpenMP comes with g++ (libgomp).
find_package(PkgConfig QUIET)
find_package(SQLite3 REQUIRED)
find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(fmt REQUIRED)

# TurboJPEG (libjpeg-turbo's TurboJPEG API), the static archive: the binaries
# run on the GPU machine, which lacks libturbojpeg.so. Found by path, not by
# the package's libjpeg-turboConfig.cmake, which also insists on libjpeg's
# files (libjpeg62-turbo-dev, a package libturbojpeg0-dev does not pull in).
find_path(TURBOJPEG_INCLUDE_DIR turbojpeg.h)
find_library(TURBOJPEG_STATIC_LIBRARY NAMES libturbojpeg.a)
if(NOT TURBOJPEG_INCLUDE_DIR OR NOT TURBOJPEG_STATIC_LIBRARY)
  message(FATAL_ERROR "libturbojpeg (the TurboJPEG API's header and static libturbojpeg.a) not found; "
    "the ImageFolder reader decodes JPEGs with it. Install it: apt-get install libturbojpeg0-dev "
    "(or tools/install-deps.sh), or pass -DTURBOJPEG_INCLUDE_DIR=... -DTURBOJPEG_STATIC_LIBRARY=.../libturbojpeg.a")
endif()
add_library(roofline_turbojpeg INTERFACE)
target_include_directories(roofline_turbojpeg SYSTEM INTERFACE ${TURBOJPEG_INCLUDE_DIR})
target_link_libraries(roofline_turbojpeg INTERFACE ${TURBOJPEG_STATIC_LIBRARY})

# No BLAS: the engine's CPU GEMMs are its own (src/engine/cpu/tiles_*.cpp), so
# results do not depend on which libopenblas a host has, nor on a second
# thread pool beside OpenMP's.

add_library(roofline_deps INTERFACE)
target_link_libraries(roofline_deps INTERFACE
  SQLite::SQLite3 ZLIB::ZLIB Threads::Threads OpenMP::OpenMP_CXX
  nlohmann_json::nlohmann_json CLI11::CLI11 fmt::fmt-header-only roofline_turbojpeg ${CMAKE_DL_LIBS})
