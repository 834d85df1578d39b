// PyTorch ATen kernels (at::native::...): elementwise, reductions, softmax,
// losses, multi-tensor apply (optimizers), normalisation, pooling, indexing.
// Which operation an elementwise or reduction kernel runs is in its template
// arguments (the functor, or the function whose lambda it is), so the bare
// names some profilers print ("vectorized_elementwise_kernel") say less.
#include <regex>

#include "src/profiler/explain/decoder.hpp"
#include "roofline/core/strings.hpp"
#include "src/profiler/explain/tokens.hpp"

namespace roofline::prof::detail {

namespace {

struct Known {
  const char* base;
  KernelOp op;
  const char* detail;
};

// Kernels known by their base name alone.
constexpr Known kKnown[] = {
    {"vectorized_elementwise_kernel", KernelOp::Elementwise, ""},
    {"unrolled_elementwise_kernel", KernelOp::Elementwise, ""},
    {"elementwise_kernel", KernelOp::Elementwise, ""},
    {"vectorized_templated_elementwise_kernel", KernelOp::Elementwise, ""},
    {"unrolled_elementwise_kernel_for_multi_outputs", KernelOp::Elementwise, ""},
    {"elementwise_kernel_with_index", KernelOp::Elementwise, "with index (arange/linspace)"},
    {"index_elementwise_kernel", KernelOp::Indexing, "advanced indexing"},
    {"reduce_kernel", KernelOp::Reduction, ""},
    {"softmax_warp_forward", KernelOp::Softmax, "softmax forward (one warp per row)"},
    {"softmax_warp_backward", KernelOp::Softmax, "softmax backward (one warp per row)"},
    {"cunn_SoftMaxForward", KernelOp::Softmax, "softmax forward (one block per row)"},
    {"cunn_SoftMaxForwardSmem", KernelOp::Softmax, "softmax forward (one block per row, shared memory)"},
    {"cunn_SoftMaxBackward", KernelOp::Softmax, "softmax backward (one block per row)"},
    {"cunn_SpatialSoftMaxForward", KernelOp::Softmax, "softmax forward over a non-last dimension"},
    {"cunn_SpatialSoftMaxBackward", KernelOp::Softmax, "softmax backward over a non-last dimension"},
    {"nll_loss_forward_reduce_cuda_kernel_2d", KernelOp::Loss, "NLL loss forward (reduced over the batch)"},
    {"nll_loss_backward_reduce_cuda_kernel_2d", KernelOp::Loss, "NLL loss backward (reduced)"},
    {"nll_loss_forward_no_reduce_cuda_kernel", KernelOp::Loss, "NLL loss forward (per sample)"},
    {"nll_loss_backward_no_reduce_cuda_kernel", KernelOp::Loss, "NLL loss backward (per sample)"},
    {"multi_tensor_apply_kernel", KernelOp::Optimizer, ""},
    {"batch_norm_collect_statistics_kernel", KernelOp::Normalization, "batch norm statistics"},
    {"batch_norm_collect_statistics_channels_last_kernel", KernelOp::Normalization,
     "batch norm statistics (channels last)"},
    {"batch_norm_transform_input_kernel", KernelOp::Normalization, "batch norm normalise"},
    {"batch_norm_backward_reduce_kernel", KernelOp::Normalization, "batch norm backward reduction"},
    {"batch_norm_backward_elemt_kernel", KernelOp::Normalization, "batch norm backward elementwise"},
    {"vectorized_layer_norm_kernel", KernelOp::Normalization, "layer norm forward"},
    {"LayerNormForwardCUDAKernel", KernelOp::Normalization, "layer norm forward"},
    {"RowwiseMomentsCUDAKernel", KernelOp::Normalization, "row moments (layer/group norm statistics)"},
    {"layer_norm_grad_input_kernel", KernelOp::Normalization, "layer norm backward (input)"},
    {"layer_norm_grad_input_kernel_vectorized", KernelOp::Normalization, "layer norm backward (input)"},
    {"GammaBetaBackwardCUDAKernel", KernelOp::Normalization, "layer norm backward (weight, bias)"},
    {"GammaBetaBackwardSimpleCUDAKernel", KernelOp::Normalization, "layer norm backward (weight, bias)"},
    {"ComputeInternalGradientsCUDAKernel", KernelOp::Normalization, "group norm backward"},
    {"max_pool_forward_nchw", KernelOp::Pooling, "max pooling forward (NCHW)"},
    {"max_pool_forward_nhwc", KernelOp::Pooling, "max pooling forward (NHWC)"},
    {"max_pool_backward_nchw", KernelOp::Pooling, "max pooling backward (NCHW)"},
    {"max_pool_backward_nhwc", KernelOp::Pooling, "max pooling backward (NHWC)"},
    {"avg_pool2d_out_cuda_frame", KernelOp::Pooling, "average pooling forward"},
    {"avg_pool2d_backward_out_cuda_frame", KernelOp::Pooling, "average pooling backward"},
    {"adaptive_average_pool", KernelOp::Pooling, "adaptive average pooling forward"},
    {"adaptive_average_gradinput", KernelOp::Pooling, "adaptive average pooling backward"},
    {"CatArrayBatchedCopy", KernelOp::Copy, "concatenation (torch.cat)"},
    {"CatArrayBatchedCopy_contig", KernelOp::Copy, "concatenation (torch.cat)"},
    {"im2col_kernel", KernelOp::Layout, "im2col"},
    {"col2im_kernel", KernelOp::Layout, "col2im"},
    {"distribution_elementwise_grid_stride_kernel", KernelOp::Random, "random sampling (normal_/uniform_/...)"},
    {"distribution_nullary_kernel", KernelOp::Random, "random sampling"},
    {"fused_dropout_kernel_vec", KernelOp::Elementwise, "dropout (random mask and scale)"},
    {"fused_dropout_kernel", KernelOp::Elementwise, "dropout (random mask and scale)"},
    {"indexSelectLargeIndex", KernelOp::Indexing, "index_select"},
    {"indexSelectSmallIndex", KernelOp::Indexing, "index_select"},
    {"embedding_backward_feature_kernel", KernelOp::Indexing, "embedding backward"},
    {"embedding_backward_cuda_kernel", KernelOp::Indexing, "embedding backward"},
    {"_scatter_gather_elementwise_kernel", KernelOp::Indexing, "scatter/gather"},
    {"scatter_gather_elementwise_kernel", KernelOp::Indexing, "scatter/gather"},
    {"amp_update_scale_cuda_kernel", KernelOp::Helper, "AMP loss-scale update"},
    {"bitonicSortKVInPlace", KernelOp::Sort, "sort"},
    {"tensor_kernel_scan_innermost_dim", KernelOp::Sort, "scan (cumsum/cumprod)"},
    {"upsample_nearest2d_out_frame", KernelOp::Layout, "nearest upsampling"},
    {"upsample_bilinear2d_out_frame", KernelOp::Layout, "bilinear upsampling"},
};

// The identifier among the template arguments that names the operation: a
// functor ("CUDAFunctor_add", "FillFunctor", "sum_functor", "MeanOps") or the
// function whose lambda the kernel runs ("launch_clamp_scalar",
// "direct_copy_kernel_cuda"). Returns it with a cleaned-up operation name.
bool find_functor(const Signature& s, std::string* ident, std::string* op) {
  std::string args = join(s.template_args, ",");
  for (const auto& id : identifiers(args)) {
    if (generic_pytorch_identifier(id)) continue;
    std::string o;
    auto strip_suffix = [&](const char* suf) {
      if (o.empty() && ends_with(id, suf) && id.size() > std::string(suf).size())
        o = id.substr(0, id.size() - std::string(suf).size());
    };
    if (starts_with(id, "CUDAFunctorOnSelf_"))
      o = id.substr(18);
    else if (starts_with(id, "CUDAFunctorOnOther_"))
      o = id.substr(19);
    else if (starts_with(id, "CUDAFunctor_"))
      o = id.substr(12);
    else if (starts_with(id, "launch_"))
      o = id.substr(7);
    strip_suffix("_kernel_cuda");
    strip_suffix("_kernel_impl");
    strip_suffix("CUDAKernelImpl");
    strip_suffix("_kernel");
    strip_suffix("MathFunctor");
    strip_suffix("Functor");
    strip_suffix("_functor");
    strip_suffix("Ops");
    strip_suffix("Epilogue");
    if (o.empty()) continue;
    if (ends_with(o, "_scalar")) o = o.substr(0, o.size() - 7);
    if (starts_with(o, "Fused")) o = o.substr(5);
    *ident = id;
    *op = o;
    return true;
  }
  return false;
}

// The data type the kernel works on: a lambda's parameter "{lambda(float)#1}",
// or the first type argument of a functor "CUDAFunctor_add<float>".
bool usable_type(const std::string& t) { return !t.empty() && t != "int32" && t != "int64" && t != "bool"; }

// The first usable type among template arguments, looking into nested ones
// (BinaryFunctor<float, ...> inside gpu_kernel_impl_nocast<...>).
std::string nested_type(const std::vector<std::string>& args, int depth, std::string* ev) {
  for (const auto& a : args) {
    std::string t = type_from_cpp(arg_value(a));
    if (usable_type(t)) {
      *ev = trim(a);
      return t;
    }
    if (depth > 0 && a.find('<') != std::string::npos) {
      Signature inner = parse_signature(a);
      std::string it = nested_type(inner.template_args, depth - 1, ev);
      if (!it.empty()) {
        if (ev->find('<') == std::string::npos) *ev = inner.base + "<" + *ev + ">";
        return it;
      }
    }
  }
  return "";
}

std::string element_type(const Signature& s, std::string* ev) {
  std::string args = join(s.template_args, ",");
  // "{lambda(float)#1}" (GNU demangler) or "[lambda(float) (instance 1)]" (CUPTI/Nsight);
  // index lambdas ("lambda(int)") say nothing about the data.
  static const std::regex lambda_re("[\\{\\[]lambda\\(([^,()]+)[,)]");
  for (auto it = std::sregex_iterator(args.begin(), args.end(), lambda_re); it != std::sregex_iterator(); ++it) {
    std::string t = type_from_cpp((*it)[1].str());
    if (usable_type(t)) {
      *ev = "lambda(" + trim((*it)[1].str()) + ")";
      return t;
    }
  }
  return nested_type(s.template_args, 3, ev);
}

}  // namespace

bool decode_pytorch(const Signature& s, Builder& b) {
  bool aten = !s.scopes.empty() && (s.scopes[0] == "at" || s.scopes[0] == "c10");
  const Known* known = nullptr;
  for (const auto& k : kKnown)
    if (s.base == k.base) known = &k;
  if (!aten && !known) return false;
  // Bare names from other libraries that share a word with ATen's are not ATen's.
  if (!aten && !s.scopes.empty()) return false;

  b.library("PyTorch ATen", aten ? s.scopes[0] + "::" : s.base);
  if (!s.has_params && s.template_args.empty() && !aten)
    b.note("only the base name was given; the operation is in the template arguments of the full name");

  KernelOp op = known ? known->op : KernelOp::Unknown;
  std::string detail = known ? known->detail : "";
  std::string ident, fop;
  bool has_functor = find_functor(s, &ident, &fop);
  std::string type_ev;
  std::string type = element_type(s, &type_ev);

  if (s.base == "vectorized_elementwise_kernel" && !s.template_args.empty() &&
      is_number(arg_value(s.template_args[0]))) {
    std::string v = arg_value(s.template_args[0]);
    b.field("vector", "Vector width", v + " elements per load/store", "<" + v + ", …>", v + "-wide vectorized loads");
  }
  if (s.base == "elementwise_kernel" && s.template_args.size() >= 2 && is_number(arg_value(s.template_args[0]))) {
    b.field(
        "threads", "Threads × items",
        arg_value(s.template_args[0]) + " threads per block, " + arg_value(s.template_args[1]) + " items per thread",
        "<" + arg_value(s.template_args[0]) + ", " + arg_value(s.template_args[1]) + ", …>");
  }
  if (s.base == "reduce_kernel" && s.template_args.size() >= 2 && is_number(arg_value(s.template_args[0]))) {
    b.field("threads", "Threads",
            arg_value(s.template_args[0]) + " threads per block, output vector " + arg_value(s.template_args[1]),
            "<" + arg_value(s.template_args[0]) + ", " + arg_value(s.template_args[1]) + ", …>");
  }

  if (op == KernelOp::Elementwise && has_functor) {
    if (fop == "direct_copy" || fop == "copy") {
      op = KernelOp::Copy;
      detail = "copy / dtype conversion (Tensor.copy_, .to())";
    } else {
      detail = fop;
    }
  } else if (op == KernelOp::Reduction && has_functor) {
    detail = fop;
  } else if (op == KernelOp::Optimizer) {
    detail = has_functor ? "multi-tensor apply: " + fop : "multi-tensor apply (torch._foreach_* ops, fused optimizers)";
    if (has_functor && (fop == "Adam" || fop == "AdamW" || fop == "Sgd"))
      detail = "fused " + fop + " optimizer step (multi-tensor apply)";
    else if (has_functor && contains(fop, "LpNorm"))
      detail = "multi-tensor norm (clip_grad_norm_, foreach_norm)";
    else if (has_functor && contains(fop, "BinaryOpList"))
      detail = "foreach binary op on tensor lists (e.g. SGD's param.add_(grad, alpha=-lr))";
    else if (has_functor && contains(fop, "Zero"))
      detail = "foreach zero_ (zero_grad)";
  } else if (op == KernelOp::Unknown && aten) {
    detail = s.base;
  }

  if (s.base == "softmax_warp_forward" || s.base == "softmax_warp_backward") {
    // template <input_t, output_t, acc_t, int log2_elements, bool is_log_softmax, bool is_masked>
    const auto& a = s.template_args;
    if (a.size() >= 5) {
      int lg = is_number(arg_value(a[3])) ? to_int(arg_value(a[3])) : -1;
      std::string log = arg_value(a[4]);
      if (lg >= 0)
        b.field("row_size", "Row length",
                "up to " + std::to_string(1 << lg) + " elements per row (log2_elements = " + std::to_string(lg) + ")",
                a[3], "rows of up to " + std::to_string(1 << lg) + " elements");
      if (log == "1" || log == "true")
        detail = "log-softmax" + std::string(s.base == "softmax_warp_forward" ? " forward" : " backward");
      b.field("log_softmax", "Log-softmax", log == "1" || log == "true" ? "yes" : "no", a[4]);
      std::string in = type_from_cpp(arg_value(a[0])), out = type_from_cpp(arg_value(a[1])),
                  acc = type_from_cpp(arg_value(a[2]));
      if (!in.empty()) b.types(in, "", acc, out, "<" + a[0] + ", " + a[1] + ", " + a[2] + ", …>");
      type.clear();
    }
  }
  if (starts_with(s.base, "cunn_SoftMax") && contains(s.text, "LogSoftMax")) detail = "log-" + detail;

  b.op(op,
       has_functor && (op == KernelOp::Elementwise || op == KernelOp::Reduction || op == KernelOp::Copy ||
                       op == KernelOp::Optimizer)
           ? s.base + "<…" + ident + "…>"
           : s.base,
       detail);
  if (has_functor) b.field("functor", "Functor / lambda of", ident, ident);
  if (!type.empty()) b.types(type, "", "", "", type_ev);
  if (op == KernelOp::Elementwise || op == KernelOp::Copy)
    b.field("bound", "Expected bound", "memory (one read and one write per element, little arithmetic)", s.base);
  return true;
}

}  // namespace roofline::prof::detail
