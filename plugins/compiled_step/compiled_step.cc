// compiled_step: the trial's forward, loss and backward replaced by one training step compiled
// ahead of time by Inductor (tools/compile_step.py: aot_export_module's joint graph, packaged by
// AOTInductor), run through LibTorch's AOTIModelPackageLoader. The package takes the parameters,
// the buffers and the batch, and returns the buffers' new values, the loss and every gradient;
// runx writes the buffers back, sets each parameter's .grad and keeps its own optimizer (so
// fused_optimizer's kernels apply). Precision and memory format are compiled in and must agree
// with the trial's; the package's sidecar (FILE.pt2.json) is checked against the model before the
// package is loaded. LibTorch 2.6 and later with CUDA.
#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <torch/torch.h>

#include "binding.h"
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
          "reached the technique unresolved (name the FILE.pt2 made by tools/compile_step.py in 'package')");
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
          "LibTorch " +
          runx::compat::TorchVersionString());
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
    Sidecar sidecar = runx::compiled_step::LoadSidecar(package_);
    if (std::string why =
            runx::compiled_step::ModelMismatch(sidecar, trial.model(), trial.batch_size(), trial.sample_shape());
        !why.empty()) {
      trial.abort(runx::TrialStatus::kIncompatible, why);
      throw std::invalid_argument(why);
    }
    const auto t0 = std::chrono::steady_clock::now();
    try {
      loader_ =
          std::make_unique<torch::inductor::AOTIModelPackageLoader>(package_, "model" RUNX_AOTI_SINGLE_THREADED_ARG);
    } catch (const c10::Error& e) {
      const std::string why = "compiled_step: cannot load '" + package_ + "': " + e.what_without_backtrace();
      trial.abort(runx::TrialStatus::kFailed, why);
      throw std::runtime_error(why);
    }
    trial.metric("compiled_step.load_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                 "s");
    trial.record("compiled_step.package", package_);
    trial.record("compiled_step.compiled", sidecar.facts.dump());
    binding_ = std::make_unique<runx::compiled_step::Binding>(std::move(sidecar), trial.model());
    runx::Step step;
    step.forward = [this](runx::Batch& batch) {
      return binding_->Step(batch, [this](std::vector<torch::Tensor>& inputs) {
        try {
          return loader_->run(inputs);  // on the current stream: cuda_graphs captures it
        } catch (const c10::Error& e) {
          throw std::runtime_error("compiled_step: the package failed: " + std::string(e.what_without_backtrace()));
        }
      });
    };
    step.backward = [](torch::Tensor&){};   // computed by the package
    step.update = std::move(inner.update);  // runx's optimizer (fused_optimizer's, where it runs)
    return step;
#else
    (void)trial;
    return inner;  // check() refused the trial
#endif
  }

 private:
#if RUNX_HAS_AOTI
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
  std::unique_ptr<runx::compiled_step::Binding> binding_;
#endif
  std::string package_;
};

}  // namespace

RUNX_PLUGIN(compiled_step, "1.0.0",
            "a whole training step (forward, loss, backward) compiled ahead of time by Inductor, run from C++",
            CompiledStep)
