# Third-party dependencies, all from Debian 12 packages (see README "Dependencies").
#   libsqlite3-dev      results store
#   zlib1g-dev          gzip-compressed IDX files (Fashion-MNIST)
#   nlohmann-json3-dev  JSON output, trace files, the profiler's result files
#   libcli11-dev        command-line parsing
#   libfmt-dev          formatting (header-only use, so no runtime library to carry)
#   libgtest-dev        tests
#   libdnnl-dev         oneDNN 2.x: the fast CPU path's large convolutions and Linear layers
#                       (src/engine/cpu/dnnl_*.cpp); a shared library that tools/checks/pack.sh
#                       carries to the GPU machine (it has no oneDNN)
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

# oneDNN, found by its header and library rather than its CMake package (whose
# config also demands the OpenCL headers for a GPU runtime roofline never uses).
# Required: the 2.x C++ API (Debian 12: 2.6.3) built on OpenMP, so that it runs on
# the same libgomp threads, and thread count, as the rest of the fast CPU path.
find_path(ROOFLINE_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
find_library(ROOFLINE_DNNL_LIBRARY NAMES dnnl)
if(NOT ROOFLINE_DNNL_INCLUDE_DIR OR NOT ROOFLINE_DNNL_LIBRARY)
  message(FATAL_ERROR "oneDNN not found (oneapi/dnnl/dnnl.hpp and libdnnl): the fast CPU convolutions "
    "and Linear layers need it. Install Debian's libdnnl-dev (tools/install-deps.sh does), or point "
    "CMAKE_PREFIX_PATH at a oneDNN 2.x install.")
endif()
file(STRINGS ${ROOFLINE_DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_version.h _dnnl_major REGEX "define DNNL_VERSION_MAJOR")
file(STRINGS ${ROOFLINE_DNNL_INCLUDE_DIR}/oneapi/dnnl/dnnl_config.h _dnnl_runtime REGEX "define DNNL_CPU_RUNTIME ")
if(NOT _dnnl_major MATCHES "MAJOR 2$")
  message(FATAL_ERROR "oneDNN at ${ROOFLINE_DNNL_INCLUDE_DIR} is not version 2.x (${_dnnl_major}): roofline uses "
    "its 2.x C++ API. Install Debian 12's libdnnl-dev (2.6), or point CMAKE_PREFIX_PATH at a 2.x install.")
endif()
if(NOT _dnnl_runtime MATCHES "DNNL_RUNTIME_OMP")
  message(FATAL_ERROR "oneDNN at ${ROOFLINE_DNNL_INCLUDE_DIR} is not built on OpenMP (${_dnnl_runtime}): its "
    "threads would not be the fast CPU path's. Use Debian's libdnnl-dev, or a oneDNN built with DNNL_CPU_RUNTIME=OMP.")
endif()
add_library(roofline_dnnl UNKNOWN IMPORTED)
set_target_properties(roofline_dnnl PROPERTIES IMPORTED_LOCATION ${ROOFLINE_DNNL_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${ROOFLINE_DNNL_INCLUDE_DIR})

add_library(roofline_deps INTERFACE)
target_link_libraries(roofline_deps INTERFACE
  SQLite::SQLite3 ZLIB::ZLIB Threads::Threads OpenMP::OpenMP_CXX roofline_dnnl roofline_turbojpeg
  nlohmann_json::nlohmann_json CLI11::CLI11 fmt::fmt-header-only ${CMAKE_DL_LIBS})
