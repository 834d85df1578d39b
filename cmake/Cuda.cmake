# CUDA is optional. ROOFLINE_HAVE_CUDA tells the rest of the build whether the
# GPU sources are compiled; the C++ code sees it as the macro ROOFLINE_HAVE_CUDA.
set(ROOFLINE_HAVE_CUDA OFF)
if(NOT ROOFLINE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # sm_80 (A100) and sm_90 (H100/H200) machine code, plus PTX for newer chips.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80-real;90")
    endif()
    enable_language(CUDA)
    # CMake before 3.26 does not know nvcc's C++20 flag (it then refuses CUDA20
    # targets at generate time): tell it.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(ROOFLINE_HAVE_CUDA ON)
  elseif(ROOFLINE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "ROOFLINE_CUDA=ON but no CUDA compiler was found. "
      "Install the CUDA toolkit (nvcc at /usr/local/cuda/bin) or configure with -DROOFLINE_CUDA=OFF.")
  else()
    message(STATUS "No CUDA toolkit found: building the CPU-only roofline (GPU commands will say so).")
  endif()
endif()

if(ROOFLINE_HAVE_CUDA)
  # cuDNN ships with the toolkit on the Debian machines (/usr/local/cuda) and in
  # PyTorch's environment on the GPU machines; we link the shared library and let
  # the loader find it (LD_LIBRARY_PATH there, see docs/gpu-machine.md).
  find_library(CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(CUPTI_LIBRARY cupti HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/extras/CUPTI/lib64)
  find_library(NVPERF_HOST_LIBRARY nvperf_host HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/extras/CUPTI/lib64)
  find_library(NVPERF_TARGET_LIBRARY nvperf_target HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/extras/CUPTI/lib64)
  foreach(lib CUDNN_LIBRARY CUPTI_LIBRARY NVPERF_HOST_LIBRARY NVPERF_TARGET_LIBRARY)
    if(NOT ${lib})
      message(FATAL_ERROR "${lib} not found in the CUDA toolkit; reinstall the toolkit with cuDNN and CUPTI, "
        "or configure with -DROOFLINE_CUDA=OFF for a CPU-only build.")
    endif()
  endforeach()
  target_compile_definitions(roofline_deps INTERFACE ROOFLINE_HAVE_CUDA=1)
  target_include_directories(roofline_deps INTERFACE ${CUDNN_INCLUDE_DIR})
  target_link_libraries(roofline_deps INTERFACE CUDA::cudart CUDA::cublas CUDA::cublasLt
    ${CUDNN_LIBRARY} ${CUPTI_LIBRARY} ${NVPERF_HOST_LIBRARY} ${NVPERF_TARGET_LIBRARY} CUDA::nvtx3)
else()
  target_compile_definitions(roofline_deps INTERFACE ROOFLINE_HAVE_CUDA=0)
endif()

# Flags for targets that compile CUDA sources.
function(roofline_cuda_target tgt)
  target_compile_options(${tgt} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo -Xcompiler=-fPIC>)
  set_target_properties(${tgt} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
endfunction()
