// model: {name: aoti, path: model.pt2}: an AOTInductor package (torch.export + Inductor, compiled
// ahead of time in Python by tools/aoti_package.py or torch._inductor.aoti_compile_and_package)
// run for inference through LibTorch's AOTIModelPackageLoader. The package holds its weights,
// its precision, its memory format and the device it was compiled for; runx feeds it batches.
// LibTorch 2.6 and later (compat::kHasAotInductor); elsewhere loading it says which version runs.
#include <string>

#include <runx/compat.h>
#include <torch/torch.h>

#if RUNX_HAS_AOTI
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#endif

#include "models/model_file.h"
#include "models/models.h"

namespace runx::models {
namespace {

#if RUNX_HAS_AOTI
class AotiModel : public Model {
 public:
  AotiModel(std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader, std::string path, int64_t num_classes)
      : loader_(std::move(loader)), path_(std::move(path)), num_classes_(num_classes) {}

  torch::Tensor forward(torch::Tensor x) override {
    const int64_t batch = x.dim() > 0 ? x.size(0) : 0;
    std::vector<torch::Tensor> out;
    try {
      // On the current CUDA stream, so that cuda_graphs captures the package's kernels.
      out = loader_->run({std::move(x)});
    } catch (const c10::Error& e) {
      throw std::invalid_argument("aoti model '" + path_ + "': " + e.what_without_backtrace());
    }
    if (out.size() != 1)
      throw std::invalid_argument("aoti model '" + path_ + "' returned " + std::to_string(out.size()) +
                                  " outputs, expected one: logits [batch, num_classes]");
    if (!checked_) {  // the contract, once: the package's batch size is only known when it runs
      const std::vector<int64_t> want{batch, num_classes_};
      if (out[0].sizes() != c10::IntArrayRef(want))
        throw std::invalid_argument("aoti model '" + path_ + "' must map [batch, *sample_shape] to logits " +
                                    ShapeText(want) + ", got " + ShapeText(out[0].sizes().vec()));
      if (!out[0].is_floating_point())
        throw std::invalid_argument("aoti model '" + path_ + "' must return floating-point logits, got " +
                                    std::string(c10::toString(out[0].scalar_type())));
      checked_ = true;
    }
    return out[0];
  }

 private:
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
  std::string path_;
  int64_t num_classes_;
  bool checked_ = false;
};
#endif

}  // namespace

std::shared_ptr<Model> LoadAoti(const nlohmann::json& model, const std::vector<int64_t>& sample_shape,
                                int64_t num_classes, c10::Device device) {
  (void)sample_shape;
  if (!model.contains("path") || !model.at("path").is_string())
    throw std::invalid_argument("model 'aoti' needs 'path', the .pt2 package made by tools/aoti_package.py");
  const std::string path = model.at("path").get<std::string>();
  if (!compat::kHasAotInductor)
    throw IncompatibleModel(
        "model 'aoti' needs LibTorch 2.6 or later (AOTInductor's package loader); this runx "
        "is built against LibTorch " +
        compat::TorchVersionString() + ". Build runx against LibTorch >= 2.6 to run '" + path +
        "', or export the model with torch.jit and use model: {name: torchscript}");
  RequireModelFile("aoti", path);
#if RUNX_HAS_AOTI
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader;
  try {
    // Single-threaded (2.7+): runx runs one pass at a time, and cuda_graphs can capture it.
    loader = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
        path, model.value("model_name", "model") RUNX_AOTI_SINGLE_THREADED_ARG);
  } catch (const c10::Error& e) {
    throw std::invalid_argument("aoti model '" + path +
                                "' cannot be loaded (it must come from the same PyTorch "
                                "version as this LibTorch, " +
                                compat::TorchVersionString() + "): " + e.what_without_backtrace());
  }
  const auto metadata = loader->get_metadata();
  const auto it = metadata.find("AOTI_DEVICE_KEY");
  if (it != metadata.end()) {
    const std::string compiled_for = it->second;
    if (compiled_for != c10::DeviceTypeName(device.type(), /*lower_case=*/true))
      throw IncompatibleModel("aoti model '" + path + "' was compiled for " + compiled_for + ", the trial runs on " +
                              device.str() + "; compile the package for " + device.str() +
                              " (tools/aoti_package.py --device) or set device: " + compiled_for);
  }
  return std::make_shared<AotiModel>(std::move(loader), path, num_classes);
#else
  (void)num_classes;
  (void)device;
  return nullptr;  // unreachable: refused above
#endif
}

}  // namespace runx::models
