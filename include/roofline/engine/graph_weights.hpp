// A graph network's weights as safetensors files with torchvision's names:
// a user's trained checkpoint (torch.save of a state_dict converted with
// safetensors.torch.save_file) loads into `roofline bench`, and roofline's
// weights load into torchvision.
#pragma once
#include <string>
#include <vector>

#include "roofline/engine/layer_graph.hpp"

namespace roofline::engine {

// Every state_dict tensor of `g` from the file, in g.params() order (torch's
// layout). The file must hold exactly those tensors with those shapes
// (BatchNorm's num_batches_tracked may be present or not); F32, BF16, F16 and
// F64 are read. Throws one Error(Input) naming every missing, extra and
// misshapen tensor.
std::vector<std::vector<float>> read_state(const LayerGraph& g, const std::string& path);
// Writes them as F32 (and each BatchNorm's num_batches_tracked as an I64 0,
// so that torchvision's strict load_state_dict accepts the file).
void write_state(const LayerGraph& g, const std::vector<std::vector<float>>& state, const std::string& path);

}  // namespace roofline::engine
