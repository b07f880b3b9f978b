// ResNet v1.5 (the stride of a downsampling bottleneck sits on its 3x3 conv), layer for layer as
// torchvision's resnet18/resnet50, including its initialisation; resnet50 with 1000 classes has
// 25,557,032 parameters.
#include <stdexcept>
#include <string>

#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include "models/models.h"

namespace runx::models {
namespace {

namespace nn = torch::nn;

nn::Conv2d Conv(int64_t in, int64_t out, int64_t k, int64_t stride = 1, int64_t pad = 0) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, k).stride(stride).padding(pad).bias(false));
}

struct Block : torch::nn::Module {
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

struct BasicBlock : Block {
  static constexpr int64_t kExpansion = 1;
  BasicBlock(int64_t in, int64_t planes, int64_t stride, bool down)
      : conv1(register_module("conv1", Conv(in, planes, 3, stride, 1))),
        bn1(register_module("bn1", nn::BatchNorm2d(planes))),
        conv2(register_module("conv2", Conv(planes, planes, 3, 1, 1))),
        bn2(register_module("bn2", nn::BatchNorm2d(planes))) {
    if (down)
      downsample = register_module("downsample", nn::Sequential(Conv(in, planes, 1, stride), nn::BatchNorm2d(planes)));
  }
  torch::Tensor forward(torch::Tensor x) override {
    auto out = torch::relu(bn1(conv1(x)));
    out = bn2(conv2(out));
    out += downsample ? downsample->forward(x) : x;
    return torch::relu(out);
  }
  nn::Conv2d conv1, conv2;
  nn::BatchNorm2d bn1, bn2;
  nn::Sequential downsample{nullptr};
};

struct Bottleneck : Block {
  static constexpr int64_t kExpansion = 4;
  Bottleneck(int64_t in, int64_t planes, int64_t stride, bool down)
      : conv1(register_module("conv1", Conv(in, planes, 1))),
        bn1(register_module("bn1", nn::BatchNorm2d(planes))),
        conv2(register_module("conv2", Conv(planes, planes, 3, stride, 1))),
        bn2(register_module("bn2", nn::BatchNorm2d(planes))),
        conv3(register_module("conv3", Conv(planes, planes * kExpansion, 1))),
        bn3(register_module("bn3", nn::BatchNorm2d(planes * kExpansion))) {
    if (down)
      downsample = register_module(
          "downsample", nn::Sequential(Conv(in, planes * kExpansion, 1, stride), nn::BatchNorm2d(planes * kExpansion)));
  }
  torch::Tensor forward(torch::Tensor x) override {
    auto out = torch::relu(bn1(conv1(x)));
    out = torch::relu(bn2(conv2(out)));
    out = bn3(conv3(out));
    out += downsample ? downsample->forward(x) : x;
    return torch::relu(out);
  }
  nn::Conv2d conv1, conv2, conv3;
  nn::BatchNorm2d bn1, bn2, bn3;
  nn::Sequential downsample{nullptr};
};

class ResNet : public Model {
 public:
  template <typename B>
  ResNet(B*, const std::vector<int>& layers, int64_t in_channels, int64_t num_classes)
      : conv1_(register_module("conv1", Conv(in_channels, 64, 7, 2, 3))),
        bn1_(register_module("bn1", nn::BatchNorm2d(64))),
        fc_(register_module("fc", nn::Linear(512 * B::kExpansion, num_classes))) {
    int64_t in = 64;
    const int64_t planes[4] = {64, 128, 256, 512};
    for (int l = 0; l < 4; ++l) {
      const int64_t stride = l == 0 ? 1 : 2;
      for (int b = 0; b < layers[l]; ++b) {
        const bool down = b == 0 && (stride != 1 || in != planes[l] * B::kExpansion);
        auto block = std::make_shared<B>(in, planes[l], b == 0 ? stride : 1, down);
        blocks_.push_back(register_module("layer" + std::to_string(l + 1) + "_" + std::to_string(b), block));
        in = planes[l] * B::kExpansion;
      }
    }
    for (auto& m : modules(/*include_self=*/false)) {
      if (auto* c = m->as<nn::Conv2d>()) {
        nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
      } else if (auto* bn = m->as<nn::BatchNorm2d>()) {
        nn::init::ones_(bn->weight);
        nn::init::zeros_(bn->bias);
      }
    }
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(bn1_(conv1_(x)));
    x = torch::max_pool2d(x, 3, 2, 1);
    for (auto& b : blocks_) x = b->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc_(x);
  }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  std::vector<std::shared_ptr<Block>> blocks_;
  nn::Linear fc_;
};

}  // namespace

std::shared_ptr<Model> MakeResNet(int depth, int64_t in_channels, int64_t num_classes) {
  switch (depth) {
    case 18:
      return std::make_shared<ResNet>(static_cast<BasicBlock*>(nullptr), std::vector<int>{2, 2, 2, 2}, in_channels,
                                      num_classes);
    case 34:
      return std::make_shared<ResNet>(static_cast<BasicBlock*>(nullptr), std::vector<int>{3, 4, 6, 3}, in_channels,
                                      num_classes);
    case 50:
      return std::make_shared<ResNet>(static_cast<Bottleneck*>(nullptr), std::vector<int>{3, 4, 6, 3}, in_channels,
                                      num_classes);
    case 101:
      return std::make_shared<ResNet>(static_cast<Bottleneck*>(nullptr), std::vector<int>{3, 4, 23, 3}, in_channels,
                                      num_classes);
    default:
      throw std::invalid_argument("no resnet of depth " + std::to_string(depth));
  }
}

}  // namespace runx::models
