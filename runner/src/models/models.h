#pragma once
// Built-in models: mlp, cnn, resnet18, resnet50 (ResNet v1.5, as torchvision).
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/nn/module.h>
#include <torch/types.h>

namespace runx::models {

/// A classifier: input [batch, *sample_shape] -> logits [batch, num_classes].
class Model : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

/// Builds the model named in `model` (the DSL's `model:` mapping) for samples of `sample_shape`.
/// Throws std::invalid_argument for a model that cannot take such samples (e.g. cnn on 1-D data).
std::shared_ptr<Model> BuildModel(const nlohmann::json& model, const std::vector<int64_t>& sample_shape,
                                  int64_t num_classes);

std::shared_ptr<Model> MakeResNet(int depth, int64_t in_channels, int64_t num_classes);

int64_t ParameterCount(const torch::nn::Module& module);

}  // namespace runx::models
