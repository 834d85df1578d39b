// Kernel names people can read. CUPTI reports mangled C++ names; demangled
// they run to hundreds of characters of template arguments (PyTorch's
// elementwise kernels carry whole lambda chains). short_kernel_name() keeps
// what tells kernels apart: the function, its direct template arguments
// (unqualified, nested arguments collapsed to "…", lambdas named by the
// function that defines them), without return type or parameter list.
// (Named short_names.hpp, not kernel_names.hpp: that one is the explain area's
// full decoder, explain_kernel(); these are the profiler tables' quick forms.)
#pragma once
#include <string>
#include <string_view>

namespace roofline::prof {

// The demangled name, or the name itself when it is not a mangled C++ name
// (C kernels, cuBLAS's "ampere_sgemm_32x32_sliced1x4_tn").
std::string demangle(std::string_view name);

// A readable name of at most `width` columns (0: no limit), from a mangled or
// demangled name.
std::string short_kernel_name(std::string_view name, size_t width = 0);

// short_kernel_name() without namespace qualifiers ("reduce_kernel<float,
// ReduceOp<…>>"), for places with little room (kernel sequences).
std::string base_kernel_name(std::string_view name, size_t width = 0);

// The library a kernel most likely comes from ("cuBLAS", "cuDNN", "CUTLASS",
// "PyTorch", "NCCL", "Triton", "roofline"), or "" when the name does not say.
std::string kernel_library(std::string_view name);

}  // namespace roofline::prof
