# Kernels of exactly known FLOPs and bytes (hardware-counter checks):
#   known_flops_kernels  static library, also linked into roofline_gpu_tests
#   known_flops          prints the expected counts; --counters profiles them in-process
#   pm_workload          PM sampling against a known duty cycle, and its overhead
set(_kf_dir ${CMAKE_CURRENT_LIST_DIR})
add_library(known_flops_kernels STATIC ${_kf_dir}/known_flops.cu)
target_include_directories(known_flops_kernels PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(known_flops_kernels PUBLIC roofline_deps)
roofline_cuda_target(known_flops_kernels)

add_executable(known_flops ${_kf_dir}/known_flops_main.cpp)
target_link_libraries(known_flops PRIVATE known_flops_kernels roofline_lib)
roofline_warnings(known_flops)

add_executable(pm_workload ${_kf_dir}/pm_workload.cu)
target_link_libraries(pm_workload PRIVATE known_flops_kernels roofline_lib)
roofline_cuda_target(pm_workload)

set_target_properties(known_flops pm_workload PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
# CMake before 3.26 has no C++20 flag for nvcc and refuses a CUDA20 target; these
# sources need no more than C++17.
if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set_target_properties(known_flops_kernels pm_workload PROPERTIES CUDA_STANDARD 17)
endif()

if(TARGET roofline_gpu_tests)
  target_link_libraries(roofline_gpu_tests PRIVATE known_flops_kernels)
endif()
