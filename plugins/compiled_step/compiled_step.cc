// compiled_step: the trial's forward, loss and backward replaced by one training step compiled
// ahead of time by Inductor (bench/compile_step.py: aot_export_module's joint graph, packaged by
// AOTInductor), run through LibTorch's AOTIModelPackageLoader. The package takes the parameters,
// the buffers and the batch, and returns the buffers' new values, the loss and every gradient;
// runx writes the buffers back, sets each parameter's .grad and keeps its own optimizer (so
// fused_optimizer's kernels apply). Precision and memory format are compiled in and must agree
// with the trial's; the package's sidecar (FILE.pt2.json) is checked against the model before the
// package is loaded. LibTorch 2.6 and later with CUDA.
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <torch/torch.h>

#include "runx/compat.h"
#include "runx/plugin_export.h"
#include "sidecar.h"

#if RUNX_HAS_AOTI
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#endif

namespace {

using runx::compiled_step::Sidecar;

class CompiledStep : public runx::Technique {
 public:
  void configure(const nlohmann::json& params) override {
    package_ = params.is_object() ? params.value("package", "auto") : "auto";
    if (package_ == "auto")  // runx run names the file (spec/compiled_package.h) before a trial is planned
      throw std::invalid_argument(
          "compiled_step: 'package: auto' is resolved by `runx run` to a file beside the results store; this trial "
          "reached the technique unresolved (name the FILE.pt2 made by bench/compile_step.py in 'package')");
  }

  runx::CheckResult check(const runx::TrialPlan& plan) override {
    Sidecar sidecar;
    try {
      sidecar = runx::compiled_step::LoadSidecar(package_);
    } catch (const std::invalid_argument& e) {
      return runx::CheckResult::Incompatible(e.what());
    }
    if (std::string why = runx::compiled_step::PlanMismatch(sidecar, plan); !why.empty())
      return runx::CheckResult::Incompatible(why);
    if (!runx::compat::kHasAotInductor)
      return runx::CheckResult::Incompatible(
          "compiled_step needs LibTorch 2.6 or later (AOTInductor's package loader); this runx is built against "
          "LibTorch " + runx::compat::TorchVersionString());
    if (!plan.device().is_cuda())
      return runx::CheckResult::Incompatible(fmt::format(
          "the package was compiled for CUDA ({}); this trial runs on {}", sidecar.device, plan.device().str()));
    if (std::string why = runx::compiled_step::TorchMismatch(sidecar.torch, runx::compat::TorchVersionString());
        !why.empty())
      return runx::CheckResult::Incompatible(why);
    return runx::CheckResult::Ok();
  }

  // Outside amp (100), whose autocast forward it replaces; inside cuda_graphs (900).
  int wrap_order() const override { return 150; }

  runx::Step wrap_step(runx::Step inner, runx::TrialContext& trial) override {
#if RUNX_HAS_AOTI
    sidecar_ = runx::compiled_step::LoadSidecar(package_);
    if (std::string why = runx::compiled_step::ModelMismatch(sidecar_, trial.model(), trial.batch_size(),
                                                             trial.sample_shape());
        !why.empty()) {
      trial.abort(runx::TrialStatus::kIncompatible, why);
      throw std::invalid_argument(why);
    }
    const auto t0 = std::chrono::steady_clock::now();
    try {
      loader_ = std::make_unique<torch::inductor::AOTIModelPackageLoader>(package_, "model" RUNX_AOTI_SINGLE_THREADED_ARG);
    } catch (const c10::Error& e) {
      const std::string why = "compiled_step: cannot load '" + package_ + "': " + e.what_without_backtrace();
      trial.abort(runx::TrialStatus::kFailed, why);
      throw std::runtime_error(why);
    }
    trial.metric("compiled_step.load_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), "s");
    trial.record("compiled_step.package", package_);
    trial.record("compiled_step.compiled", sidecar_.facts.dump());
    Bind(trial.model());
    runx::Step step;
    step.forward = [this](runx::Batch& batch) { return Run(batch); };
    step.backward = [](torch::Tensor&) {};  // computed by the package
    step.update = std::move(inner.update);  // runx's optimizer (fused_optimizer's, where it runs)
    return step;
#else
    (void)trial;
    return inner;  // check() refused the trial
#endif
  }

 private:
#if RUNX_HAS_AOTI
  /// The model's tensors in the package's input order, and where each output goes.
  void Bind(torch::nn::Module& model) {
    std::map<std::string, torch::Tensor> params, buffers;
    for (auto& p : model.named_parameters()) params[p.key()] = p.value();
    for (auto& b : model.named_buffers()) buffers[b.key()] = b.value();
    inputs_.assign(sidecar_.inputs.size(), torch::Tensor());
    state_.clear(), targets_.clear();
    for (size_t i = 0; i < sidecar_.inputs.size(); ++i) {
      const auto& slot = sidecar_.inputs[i];
      if (slot.kind == "parameter" || slot.kind == "buffer") {
        state_.emplace_back(i, (slot.kind == "parameter" ? params : buffers).at(slot.name));
        inputs_[i] = state_.back().second.detach();  // the same storage, without autograd
      } else if (slot.kind == "input") {
        input_index_ = i;
      } else if (slot.kind == "target") {
        target_index_ = i;
      }
    }
    for (const auto& slot : sidecar_.outputs) {
      if (slot.kind == "buffer_update") targets_.push_back(buffers.at(slot.name));
      else if (slot.kind == "gradient") targets_.push_back(params.at(slot.name));
      else targets_.push_back(torch::Tensor());
    }
  }

  torch::Tensor Run(runx::Batch& batch) {
    torch::NoGradGuard no_grad;
    for (auto& [i, t] : state_)  // a technique may have replaced a tensor's storage (set_data): follow it
      if (inputs_[i].data_ptr() != t.data_ptr()) inputs_[i] = t.detach();
    if (!checked_) CheckBatch(batch);
    inputs_[input_index_] = batch.input;
    inputs_[target_index_] = batch.target;
    std::vector<torch::Tensor> out;
    try {
      out = loader_->run(inputs_);  // on the current stream: cuda_graphs captures it
    } catch (const c10::Error& e) {
      throw std::runtime_error("compiled_step: the package failed: " + std::string(e.what_without_backtrace()));
    }
    inputs_[input_index_] = torch::Tensor(), inputs_[target_index_] = torch::Tensor();
    if (out.size() != sidecar_.outputs.size())
      throw std::runtime_error(fmt::format("compiled_step: the package returned {} outputs, its sidecar lists {}",
                                           out.size(), sidecar_.outputs.size()));
    torch::Tensor loss;
    for (size_t i = 0; i < out.size(); ++i) {
      const auto& slot = sidecar_.outputs[i];
      if (!checked_ && out[i].sizes() != c10::IntArrayRef(slot.shape))
        throw std::runtime_error(fmt::format("compiled_step: output {} ({} '{}') has shape {}, the sidecar says {}", i,
                                             slot.kind, slot.name, c10::str(out[i].sizes()), c10::str(c10::IntArrayRef(slot.shape))));
      if (slot.kind == "buffer_update") targets_[i].copy_(out[i]);
      else if (slot.kind == "gradient") targets_[i].mutable_grad() = out[i];
      else loss = out[i];
    }
    checked_ = true;
    return loss;
  }

  void CheckBatch(const runx::Batch& batch) const {
    for (const auto& slot : sidecar_.inputs) {
      if (slot.kind != "input" && slot.kind != "target") continue;
      const torch::Tensor& t = slot.kind == "input" ? batch.input : batch.target;
      if (t.sizes().vec() != slot.shape || runx::compiled_step::DtypeName(t) != slot.dtype ||
          !runx::compiled_step::SameLayout(t, slot.stride))
        throw std::runtime_error(fmt::format(
            "compiled_step: the batch's {} is {} {} strides {}, the package expects {} {} strides {}", slot.kind,
            runx::compiled_step::DtypeName(t), c10::str(t.sizes()), c10::str(t.strides()), slot.dtype,
            c10::str(c10::IntArrayRef(slot.shape)), c10::str(c10::IntArrayRef(slot.stride))));
    }
  }

  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
#endif
  std::string package_;
  Sidecar sidecar_;
  std::vector<torch::Tensor> inputs_;   ///< the package's inputs; the batch's slots are set per step
  std::vector<std::pair<size_t, torch::Tensor>> state_;  ///< input index -> the model's parameter or buffer
  std::vector<torch::Tensor> targets_;  ///< per output: the buffer it updates or the parameter whose grad it is
  size_t input_index_ = 0, target_index_ = 0;
  bool checked_ = false;
};

}  // namespace

RUNX_PLUGIN(compiled_step, "1.0.0",
            "a whole training step (forward, loss, backward) compiled ahead of time by Inductor, run from C++",
            CompiledStep)
