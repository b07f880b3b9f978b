#include "models/models.h"

#include "models/gpt.h"

#include <string>

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

namespace runx::models {
namespace {

namespace nn = torch::nn;

/// Flatten -> (Linear -> ReLU -> Dropout)* -> Linear.
class Mlp : public Model {
 public:
  Mlp(int64_t in, const std::vector<int64_t>& hidden, int64_t num_classes, double dropout)
      : dropout_(dropout) {
    for (size_t i = 0; i < hidden.size(); ++i) {
      layers_.push_back(register_module("fc" + std::to_string(i), nn::Linear(in, hidden[i])));
      in = hidden[i];
    }
    head_ = register_module("head", nn::Linear(in, num_classes));
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = x.flatten(1);
    for (auto& l : layers_) {
      x = torch::relu(l(x));
      if (dropout_ > 0) x = torch::dropout(x, dropout_, is_training());
    }
    return head_(x);
  }

 private:
  std::vector<nn::Linear> layers_;
  nn::Linear head_{nullptr};
  double dropout_;
};

/// (Conv3x3 -> BatchNorm -> ReLU -> MaxPool2)* -> global average pool -> Linear.
class Cnn : public Model {
 public:
  Cnn(int64_t in, const std::vector<int64_t>& channels, int64_t num_classes, double dropout)
      : dropout_(dropout) {
    for (size_t i = 0; i < channels.size(); ++i) {
      convs_.push_back(register_module(
          "conv" + std::to_string(i),
          nn::Conv2d(nn::Conv2dOptions(in, channels[i], 3).padding(1).bias(false))));
      bns_.push_back(register_module("bn" + std::to_string(i), nn::BatchNorm2d(channels[i])));
      in = channels[i];
    }
    head_ = register_module("head", nn::Linear(in, num_classes));
  }
  torch::Tensor forward(torch::Tensor x) override {
    for (size_t i = 0; i < convs_.size(); ++i) {
      x = torch::relu(bns_[i](convs_[i](x)));
      if (x.size(2) >= 2 && x.size(3) >= 2) x = torch::max_pool2d(x, 2);
    }
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    if (dropout_ > 0) x = torch::dropout(x, dropout_, is_training());
    return head_(x);
  }

 private:
  std::vector<nn::Conv2d> convs_;
  std::vector<nn::BatchNorm2d> bns_;
  nn::Linear head_{nullptr};
  double dropout_;
};

std::vector<int64_t> Ints(const nlohmann::json& j, const char* key, std::vector<int64_t> fallback) {
  return j.contains(key) ? j.at(key).get<std::vector<int64_t>>() : fallback;
}

int64_t ImageChannels(const std::string& name, const std::vector<int64_t>& shape) {
  if (shape.size() != 3)
    throw std::invalid_argument("model '" + name + "' needs image samples [channels, height, width], got " +
                                std::to_string(shape.size()) + "-D samples");
  return shape[0];
}

}  // namespace

std::shared_ptr<Model> BuildModel(const nlohmann::json& model, const std::vector<int64_t>& sample_shape,
                                  int64_t num_classes, c10::Device device) {
  return BuildModel(model, SampleSpec{sample_shape, c10::kFloat, {}, c10::kLong, num_classes}, device);
}

std::shared_ptr<Model> BuildModel(const nlohmann::json& model, const SampleSpec& input, c10::Device device) {
  const std::string name = model.at("name").get<std::string>();
  if (name == "gpt") return MakeGpt(model, input);
  if (name == "torchscript")
    return LoadTorchScript(model, input, model.value("num_classes", input.num_classes), device);
  if (name == "python") {
    // The TorchScript file runx compile made from the builder, resolved by the runner (model.artifact).
    if (!model.contains("artifact") || !model.at("artifact").is_string())
      throw std::invalid_argument("model 'python' (" + model.value("path", std::string()) +
                                  ") is trained from the TorchScript file `runx compile FILE.yaml` makes from its "
                                  "builder, and this trial names none (model.artifact)");
    nlohmann::json file = model;
    file["name"] = "torchscript";
    file["path"] = model.at("artifact");
    return LoadTorchScript(file, input, model.value("num_classes", input.num_classes), device);
  }
  if (input.tokens())
    throw std::invalid_argument("model '" + name + "' reads float samples, and the data gives token ids (" +
                                std::string(c10::toString(input.input_dtype)) + "); use model 'gpt' or a TorchScript model");
  const std::vector<int64_t>& sample_shape = input.input_shape;
  int64_t num_classes = input.num_classes;
  if (model.contains("num_classes")) num_classes = model.at("num_classes").get<int64_t>();
  const double dropout = model.value("dropout", 0.0);
  if (name == "mlp") {
    int64_t in = 1;
    for (auto d : sample_shape) in *= d;
    return std::make_shared<Mlp>(in, Ints(model, "hidden", {256}), num_classes, dropout);
  }
  if (name == "cnn")
    return std::make_shared<Cnn>(ImageChannels(name, sample_shape), Ints(model, "channels", {32, 64}),
                                 num_classes, dropout);
  if (name == "resnet18") return MakeResNet(18, ImageChannels(name, sample_shape), num_classes);
  if (name == "resnet50") return MakeResNet(50, ImageChannels(name, sample_shape), num_classes);
  if (name == "aoti") return LoadAoti(model, sample_shape, num_classes, device);
  throw std::invalid_argument("unknown model '" + name + "'");
}

int64_t ParameterCount(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

}  // namespace runx::models
