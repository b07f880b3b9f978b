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
  Mlp(int64_t in, const std::vector<int64_t>& hidden, int64_t num_classes, double dropout) : dropout_(dropout) {
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
  Cnn(int64_t in, const std::vector<int64_t>& channels, int64_t num_classes, double dropout) : dropout_(dropout) {
    for (size_t i = 0; i < channels.size(); ++i) {
      convs_.push_back(register_module("conv" + std::to_string(i),
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

/// A model that reads float samples refuses token ids (gpt and model files read them).
void NeedFloatSamples(const std::string& name, const SampleSpec& input) {
  if (input.tokens())
    throw std::invalid_argument("model '" + name + "' reads float samples, and the data gives token ids (" +
                                std::string(c10::toString(input.input_dtype)) +
                                "); use model 'gpt' or a TorchScript model");
}

int64_t NumClasses(const nlohmann::json& model, const SampleSpec& input) {
  return model.contains("num_classes") ? model.at("num_classes").get<int64_t>() : input.num_classes;
}

std::shared_ptr<Model> BuildMlp(const nlohmann::json& model, const SampleSpec& input, c10::Device) {
  NeedFloatSamples("mlp", input);
  int64_t in = 1;
  for (auto d : input.input_shape) in *= d;
  return std::make_shared<Mlp>(in, Ints(model, "hidden", {256}), NumClasses(model, input), model.value("dropout", 0.0));
}

std::shared_ptr<Model> BuildCnn(const nlohmann::json& model, const SampleSpec& input, c10::Device) {
  NeedFloatSamples("cnn", input);
  return std::make_shared<Cnn>(ImageChannels("cnn", input.input_shape), Ints(model, "channels", {32, 64}),
                               NumClasses(model, input), model.value("dropout", 0.0));
}

template <int kDepth>
std::shared_ptr<Model> BuildResNet(const nlohmann::json& model, const SampleSpec& input, c10::Device) {
  const std::string name = "resnet" + std::to_string(kDepth);
  NeedFloatSamples(name, input);
  return MakeResNet(kDepth, ImageChannels(name, input.input_shape), NumClasses(model, input));
}

std::shared_ptr<Model> BuildGpt(const nlohmann::json& model, const SampleSpec& input, c10::Device) {
  return MakeGpt(model, input);
}

std::shared_ptr<Model> BuildTorchScript(const nlohmann::json& model, const SampleSpec& input, c10::Device device) {
  return LoadTorchScript(model, input, model.value("num_classes", input.num_classes), device);
}

std::shared_ptr<Model> BuildAoti(const nlohmann::json& model, const SampleSpec& input, c10::Device device) {
  NeedFloatSamples("aoti", input);
  return LoadAoti(model, input.input_shape, NumClasses(model, input), device);
}

std::shared_ptr<Model> BuildPython(const nlohmann::json& model, const SampleSpec& input, c10::Device device) {
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

using Builder = std::shared_ptr<Model> (*)(const nlohmann::json& model, const SampleSpec& input, c10::Device device);

/// The builder of each model of spec/catalogue.h's ModelCatalogue (a unit test holds the two equal).
const std::vector<std::pair<std::string, Builder>>& Builders() {
  static const std::vector<std::pair<std::string, Builder>> builders = {
      {"mlp", BuildMlp},
      {"cnn", BuildCnn},
      {"resnet18", BuildResNet<18>},
      {"resnet50", BuildResNet<50>},
      {"gpt", BuildGpt},
      {"torchscript", BuildTorchScript},
      {"aoti", BuildAoti},
      {"python", BuildPython},
  };
  return builders;
}

}  // namespace

std::shared_ptr<Model> BuildModel(const nlohmann::json& model, const SampleSpec& input, c10::Device device) {
  const std::string name = model.at("name").get<std::string>();
  for (const auto& [built, build] : Builders())
    if (built == name) return build(model, input, device);
  NeedFloatSamples(name, input);
  throw std::invalid_argument("unknown model '" + name + "'");
}

std::shared_ptr<Model> BuildModel(const nlohmann::json& model, const std::vector<int64_t>& sample_shape,
                                  int64_t num_classes, c10::Device device) {
  return BuildModel(model, SampleSpec{sample_shape, c10::kFloat, {}, c10::kLong, num_classes}, device);
}

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const auto& [name, build] : Builders()) names.push_back(name);
  return names;
}

int64_t ParameterCount(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

}  // namespace runx::models
