// A technique that gets the step wrong on purpose: every gradient is scaled by `scale` after the
// backward pass (1.1: a 10% error in every update). The step check (runx verify, runx compile's
// package check) must reject it; scale 1 changes nothing.
#include <torch/torch.h>

#include "runx/plugin_export.h"

namespace {
class WrongStep : public runx::Technique {
 public:
  void configure(const nlohmann::json& params) override {
    scale_ = params.is_object() ? params.value("scale", 1.1) : 1.1;
  }

  runx::Step wrap_step(runx::Step inner, runx::TrialContext& trial) override {
    auto backward = std::move(inner.backward);
    torch::nn::Module* model = &trial.model();
    const double scale = scale_;
    inner.backward = [backward = std::move(backward), model, scale](torch::Tensor& loss) {
      backward(loss);
      torch::NoGradGuard no_grad;
      for (auto& p : model->parameters())
        if (p.grad().defined()) p.grad().mul_(scale);
    };
    return inner;
  }

 private:
  double scale_ = 1.1;
};
}  // namespace

RUNX_PLUGIN(test_wrong_step, "0.1.0", "test plugin: scales every gradient (a wrong training step)", WrongStep)
