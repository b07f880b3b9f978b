#pragma once
// Built-in models: mlp, cnn, resnet18, resnet50 (ResNet v1.5, as torchvision), gpt (a decoder-only
// transformer over token ids, gpt.h); torchscript, a TorchScript file trained through a wrapper
// (torchscript.cc), which is also how a python model runs (the TorchScript file runx compile made
// from its builder, model.artifact; spec/python_model.h); and aoti, an AOTInductor package run for
// inference (aoti.cc).
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>
#include <nlohmann/json.hpp>

namespace torch::jit {
struct Module;
}

#include "data/sample_spec.h"

namespace runx::models {

/// A classifier: input [batch, *sample_shape] -> logits [batch, num_classes]; or a language model
/// (gpt): token ids [batch, T] -> next-token logits [batch, T, vocabulary].
class Model : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
  /// Facts about the model the trial records in its environment ("torchscript.executor" ->
  /// "interpreter"), as data sources do.
  virtual std::vector<std::pair<std::string, std::string>> Facts() const { return {}; }
};

/// Builds the model named in `model` (the DSL's `model:` mapping) for samples of `sample_shape`.
/// Throws std::invalid_argument for a model that cannot take such samples (e.g. cnn on 1-D data).
/// Built-in models are made on the CPU (move them with .to); a TorchScript file is loaded onto
/// `device` directly.
std::shared_ptr<Model> BuildModel(const nlohmann::json& model, const std::vector<int64_t>& sample_shape,
                                  int64_t num_classes, c10::Device device = c10::Device(c10::DeviceType::CPU));

/// The same for the samples `input` declares (shape, dtype, classes or vocabulary): gpt reads token
/// ids, a TorchScript model either kind, every other model float samples; a model given the other
/// kind throws std::invalid_argument naming both.
std::shared_ptr<Model> BuildModel(const nlohmann::json& model, const SampleSpec& input,
                                  c10::Device device = c10::Device(c10::DeviceType::CPU));

/// The models BuildModel builds, in the order of spec/catalogue.h's ModelCatalogue (which declares
/// their keys; models/ cannot see spec/, so a unit test holds the two lists equal).
std::vector<std::string> ModelNames();

/// model: {name: torchscript, path: FILE}: loads FILE with torch::jit::load onto `device` (every
/// tensor, including the constants a frozen module has instead of parameters) and wraps it.
/// The wrapper's parameters and buffers are the jit module's own tensors under the same dotted
/// names, so training (and .to(device)) changes the jit module. Throws std::invalid_argument naming
/// the file when it cannot be loaded or does not map samples of `input` to logits: float samples
/// [batch, *sample_shape] to [batch, num_classes]; token ids [batch, seq_len] (int64) to
/// [batch, seq_len, vocabulary] (a language model). `num_classes` is input.num_classes unless the
/// model's config overrides it.
std::shared_ptr<Model> LoadTorchScript(const nlohmann::json& model, const SampleSpec& input, int64_t num_classes,
                                       c10::Device device = c10::Device(c10::DeviceType::CPU));

/// Moves the 0-dim integer (and bool) tensor constants of every graph in `module`'s compilation
/// unit to `where`; says how many it found and how many moved. LoadTorchScript puts them back on the CPU after
/// loading onto the trial's device. They are the shape arithmetic of a trace: torch.jit.trace
/// records `x.shape[2] // 16` as aten::size -> prim::NumToTensor (a CPU tensor) -> floor_divide by
/// a tensor constant -> aten::Int. Loaded onto a GPU, that constant makes the arithmetic a GPU
/// kernel and aten::Int a device-to-host copy: the host waits for every queued kernel, several
/// times per forward (each attention layer of a traced torchvision ViT), and no CUDA graph can
/// capture the step. On the host they are plain scalars to any device op (ATen takes a 0-dim CPU
/// tensor as a scalar operand). Floating-point and larger constants (a frozen module's weights)
/// stay where they were loaded.
/// Recorded by a torchscript trial as torchscript.host_constants (found) and
/// torchscript.host_constants_moved (moved back from the device the file was loaded onto).
struct PlacedConstants {
  int64_t found = 0;  ///< 0-dim integer tensor constants in the graphs
  int64_t moved = 0;  ///< of which were elsewhere and are now on `where`
};
PlacedConstants PlaceIntegerScalarConstants(torch::jit::Module& module, c10::Device where);

/// A model this build or this device cannot run at all (e.g. an AOTInductor package on a LibTorch
/// without AOTInductor, or compiled for another device type): the trial is `incompatible`.
class IncompatibleModel : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// model: {name: aoti, path: FILE.pt2}: an AOTInductor package, inference only (its weights,
/// precision and memory format are compiled in; it has no parameters to train). Throws
/// IncompatibleModel without AOTInductor (LibTorch < 2.6) or when the package was compiled for
/// another device type, std::invalid_argument when FILE is missing or cannot be loaded. Its
/// output is checked on the first forward ([batch, num_classes], floating point).
std::shared_ptr<Model> LoadAoti(const nlohmann::json& model, const std::vector<int64_t>& sample_shape,
                                int64_t num_classes, c10::Device device = c10::Device(c10::DeviceType::CPU));

std::shared_ptr<Model> MakeResNet(int depth, int64_t in_channels, int64_t num_classes);

int64_t ParameterCount(const torch::nn::Module& module);

}  // namespace runx::models
