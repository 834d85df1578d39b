// GraphNetwork's dynamic loss scaling (fp16 training, or forced on by
// GraphOptions::loss_scaling), as torch.amp.GradScaler around a step:
//   loss_forward:   dlogits ·= *scale                 (GradScaler.scale(loss))
//   optimizer_step: found_inf = 0; found_inf |= any non-finite gradient
//                   (one pass over the flat gradients); the update unscales by
//                   *inv_scale and is skipped as a whole when found_inf is set
//                   (GradScaler.step); the scale backs off or grows and the
//                   skipped count advances (GradScaler.update).
// Every scalar lives in the context's memory and is read by the ops there, so
// the step never waits for the host and is captured whole as a CUDA graph.

#include "roofline/engine/graph_network.hpp"

namespace roofline::engine {

namespace {
enum Counter { Tracker = 0, FoundInf = 1, Skipped = 2 };
}

void GraphNetwork::init_loss_scale() {
  if (!loss_scaling()) return;
  scale_ = ctx_.empty({64}, DType::F32, "loss scale");
  scale_counts_ = ctx_.empty({64}, DType::I32, "loss scale counters");
  memory_.optimizer += scale_.nbytes() + scale_counts_.nbytes();
  std::int32_t* c = scale_counts_.i32();
  ops::loss_scale_init(ctx_, opt_.loss_scale, scale_.f32(), scale_.f32() + 1, c + Tracker, c + FoundInf, c + Skipped);
}

void GraphNetwork::scale_loss_grad(std::int64_t n) {
  if (!loss_scaling()) return;
  ops::scale_loss_grad(ctx_, n, dlogits32_.f32(), scale_.f32());
}

ops::GradScale GraphNetwork::check_grads() {
  if (!loss_scaling()) return {};
  std::int32_t* c = scale_counts_.i32();
  // loss_scale_update clears the flag too; cleared here as well, so a backward
  // without an update in between (a test's, a profiler's) cannot leave it set.
  ctx_.memset_async(c + FoundInf, 0, sizeof(std::int32_t));
  ops::grads_check_finite(ctx_, learnable_floats_, grads_.f32(), c + FoundInf);  // the padding is zero
  return {scale_.f32() + 1, c + FoundInf, c + Skipped};
}

void GraphNetwork::update_loss_scale() {
  if (!loss_scaling()) return;
  std::int32_t* c = scale_counts_.i32();
  ops::loss_scale_update(ctx_, opt_.loss_scale, scale_.f32(), scale_.f32() + 1, c + Tracker, c + FoundInf, c + Skipped);
}

float GraphNetwork::loss_scale() const {
  if (!loss_scaling()) return 1.0f;
  ctx_.synchronize();
  float s = 0;
  copy_bytes(&s, Device::cpu(), scale_.raw(), scale_.device(), sizeof s);
  return s;
}

std::int64_t GraphNetwork::skipped_steps() const {
  if (!loss_scaling()) return 0;
  ctx_.synchronize();
  std::int32_t k = 0;
  copy_bytes(&k, Device::cpu(), scale_counts_.i32() + Skipped, scale_counts_.device(), sizeof k);
  return k;
}

}  // namespace roofline::engine
