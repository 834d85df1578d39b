# Extra test programs. Each area adds its own tests/programs/<name>.cmake (so
# areas do not edit one shared file); this includes them all, in a CUDA build.
if(ROOFLINE_HAVE_CUDA)
  file(GLOB ROOFLINE_PROGRAM_CMAKES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/programs/*.cmake)
  foreach(_program_cmake ${ROOFLINE_PROGRAM_CMAKES})
    include(${_program_cmake})
  endforeach()
endif()
