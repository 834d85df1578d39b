# The sweep's SASS check (docs/sweep.md). The sweep kernels (src/sweep/*.cu)
# build as their own OBJECT library, so that after they compile,
# `cuobjdump -sass` can list their machine code; cmake/SassEmbed.cmake turns that
# listing into a C++ source compiled into roofline_lib, where `roofline sweep`
# counts FADD/FMUL/FFMA per kernel. Without cuobjdump the generated source says
# the check was not done, and the binary tries cuobjdump on itself at run time.
if(NOT ROOFLINE_HAVE_CUDA)
  return()
endif()

file(GLOB ROOFLINE_SWEEP_CU CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/sweep/*.cu)
# The area glob put them into roofline_lib; they go through the object library instead.
get_target_property(_lib_sources roofline_lib SOURCES)
list(REMOVE_ITEM _lib_sources ${ROOFLINE_SWEEP_CU})
set_property(TARGET roofline_lib PROPERTY SOURCES ${_lib_sources})

add_library(roofline_sweep_kernels OBJECT ${ROOFLINE_SWEEP_CU})
if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  # CMake before 3.26 does not know nvcc's C++20 mode (the GPU machine's 4.x
  # does) and refuses a CUDA20 target; these kernels need no more than C++17.
  set_target_properties(roofline_sweep_kernels PROPERTIES CUDA_STANDARD 17)
endif()
target_include_directories(roofline_sweep_kernels PRIVATE
  ${CMAKE_SOURCE_DIR}/include ${CMAKE_BINARY_DIR}/generated ${CMAKE_SOURCE_DIR})
target_link_libraries(roofline_sweep_kernels PRIVATE roofline_deps)
roofline_cuda_target(roofline_sweep_kernels)

find_program(ROOFLINE_CUOBJDUMP cuobjdump HINTS ${CUDAToolkit_BIN_DIR} /usr/local/cuda/bin)
set(_sass_cpp ${CMAKE_BINARY_DIR}/generated/roofline/sweep_sass.cpp)
add_custom_command(
  OUTPUT ${_sass_cpp}
  COMMAND ${CMAKE_COMMAND} "-DCUOBJDUMP=${ROOFLINE_CUOBJDUMP}" "-DOBJECTS=$<TARGET_OBJECTS:roofline_sweep_kernels>"
          "-DOUT=${_sass_cpp}" -P ${CMAKE_SOURCE_DIR}/cmake/SassEmbed.cmake
  DEPENDS roofline_sweep_kernels $<TARGET_OBJECTS:roofline_sweep_kernels> ${CMAKE_SOURCE_DIR}/cmake/SassEmbed.cmake
  COMMENT "Counting floating-point instructions in the sweep kernels' SASS"
  VERBATIM COMMAND_EXPAND_LISTS)
target_sources(roofline_lib PRIVATE $<TARGET_OBJECTS:roofline_sweep_kernels> ${_sass_cpp})
if(ROOFLINE_CUOBJDUMP)
  message(STATUS "sweep SASS check: ${ROOFLINE_CUOBJDUMP}")
else()
  message(STATUS "sweep SASS check: cuobjdump not found; the binary will say so (and try cuobjdump at run time)")
endif()
