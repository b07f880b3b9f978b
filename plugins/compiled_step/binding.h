#pragma once
// How a compiled training step meets the model: its inputs are the model's parameters and buffers
// (the tensors themselves, in the sidecar's order) and the batch; its outputs go where the sidecar
// says: each buffer update is copied into its buffer, each gradient becomes its parameter's .grad,
// the loss is returned. Apart from the loader, so that the mapping is tested on any LibTorch (the
// unit tests run it against a reference step computed eagerly; the plugin against AOTInductor).
#include <functional>
#include <utility>
#include <vector>

#include <torch/nn/module.h>

#include "runx/plugin.h"
#include "sidecar.h"

namespace runx::compiled_step {

class Binding {
 public:
  /// Runs the package on its inputs (in the sidecar's order) and returns its outputs.
  using Run = std::function<std::vector<torch::Tensor>(std::vector<torch::Tensor>&)>;

  /// Binds `model`'s tensors by name. The model must fit the sidecar (ModelMismatch is "").
  Binding(Sidecar sidecar, torch::nn::Module& model);

  /// One step: feeds the parameters and buffers (following a tensor whose storage a technique
  /// replaced) and `batch`, runs `run` without autograd, writes the buffer updates and gradients
  /// back and returns the loss. The first step also checks the batch's shape, dtype and strides
  /// and every output's shape against the sidecar (std::runtime_error naming both sides).
  torch::Tensor Step(const Batch& batch, const Run& run);

 private:
  void CheckBatch(const Batch& batch) const;

  Sidecar sidecar_;
  std::vector<torch::Tensor> inputs_;                    ///< the package's inputs; the batch's slots are set per step
  std::vector<std::pair<size_t, torch::Tensor>> state_;  ///< input index -> the model's parameter or buffer
  std::vector<torch::Tensor> targets_;  ///< per output: the buffer it updates or the parameter whose grad it is
  size_t input_index_ = 0, target_index_ = 0;
  bool checked_ = false;
};

}  // namespace runx::compiled_step
