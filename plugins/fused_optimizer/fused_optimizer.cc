// fused_optimizer: replaces the optimizer update with LibTorch's multi-tensor (`_foreach_*`) or
// fused (`_fused_sgd_`, `_fused_adamw_`) kernels, with the hyper-parameters of the trial's
// torch::optim::SGD or AdamW (read from its param groups at every step). The built-in step runs a
// handful of kernels per parameter; these run a handful for all of them. The state (momentum
// buffers, moments, step counts) lives in the plugin; the torch::optim optimizer keeps none.
// Gradients are reset to undefined after the update (set_to_none), like the runner's own update.
#include <string>
#include <vector>

#include <torch/torch.h>

#include "runx/compat.h"
#include "runx/plugin_export.h"

namespace {

enum class Kernel { kForeach, kFused };

struct ParamState {
  torch::Tensor momentum, exp_avg, exp_avg_sq, step_tensor;  ///< step_tensor: the fused AdamW's count
  int64_t step = 0;                                          ///< the foreach AdamW's count, on the host
};

/// The parameters of one group that have a gradient this step, with their state.
struct Live {
  std::vector<torch::Tensor> params, grads;
  std::vector<ParamState*> states;
};

std::string OptimizerName(const nlohmann::json& config) {
  const auto train = config.value("train", nlohmann::json::object());
  return train.value("optimizer", nlohmann::json::object()).value("name", std::string("sgd"));
}

class FusedOptimizer : public runx::Technique {
 public:
  void configure(const nlohmann::json& p) override { kernel_param_ = p.value("kernel", std::string("auto")); }

  /// kernel decided: "fused" where LibTorch has fused kernels for the device (or when asked for),
  /// else "foreach"; and the optimizer it updates.
  nlohmann::json resolve(const nlohmann::json& params, const runx::TrialPlan& plan) override {
    nlohmann::json settings = params.is_object() ? params : nlohmann::json::object();
    settings["kernel"] = KernelFor(plan.device()) == Kernel::kFused ? "fused" : "foreach";
    settings["optimizer"] = OptimizerName(plan.config());
    return settings;
  }

  runx::CheckResult check(const runx::TrialPlan& plan) override {
    if (plan.task() == runx::Task::kInfer)
      return runx::CheckResult::Incompatible("fused_optimizer replaces the optimizer's update; task 'infer' has none");
    const std::string name = OptimizerName(plan.config());
    if (name != "sgd" && name != "adamw")
      return runx::CheckResult::Incompatible("optimizer '" + name + "': only sgd and adamw have foreach/fused updates");
    std::string why;
    if (kernel_param_ == "fused" && !runx::compat::FusedOptimizerSupported(plan.device().type(), &why))
      return runx::CheckResult::Incompatible("kernel 'fused' on " + plan.device().str() + ": " + why);
    return runx::CheckResult::Ok();
  }

  /// Innermost: it replaces the optimizer step itself, so that the wrappers of amp (unscale, skip
  /// on overflow) and anomaly (check, skip) still run around it.
  int wrap_order() const override { return 50; }

  runx::Step wrap_step(runx::Step step, runx::TrialContext& trial) override {
    optimizer_ = &trial.optimizer();
    auto& groups = optimizer_->param_groups();
    if (groups.empty()) throw std::invalid_argument("the optimizer has no parameter groups");
    adamw_ = dynamic_cast<torch::optim::AdamWOptions*>(&groups[0].options()) != nullptr;
    if (!adamw_ && !dynamic_cast<torch::optim::SGDOptions*>(&groups[0].options()))
      throw std::invalid_argument("only torch::optim::SGD and torch::optim::AdamW have foreach/fused updates");
    std::string why;
    if (kernel_param_ == "fused" && !runx::compat::FusedOptimizerSupported(trial.device().type(), &why))
      throw std::invalid_argument("kernel 'fused': " + why);
    kernel_ = KernelFor(trial.device());
    state_.assign(groups.size(), {});
    const char* kernel = kernel_ == Kernel::kFused ? "fused" : "foreach";
    const char* name = adamw_ ? "adamw" : "sgd";
    trial.record("fused_optimizer.kernel", kernel);
    trial.record("fused_optimizer.optimizer", name);
    trial.note(std::string("fused_optimizer: ") + name + " with the " + kernel + " kernel");
    step.update = [this] { Update(); };  // the runner's optimizer->step() and zero_grad, replaced
    return step;
  }

  /// Batch-size probes (on_train_begin) run the step and the runner restores the weights and the
  /// torch::optim state: drop ours too, until the first real step has ended.
  void on_batch(runx::Batch& batch, runx::TrialContext& trial) override {
    (void)batch, (void)trial;
    if (!started_)
      for (auto& group : state_) group.clear();
  }
  void on_step_end(const runx::StepStats& stats, runx::TrialContext& trial) override {
    (void)stats, (void)trial;
    started_ = true;
  }
  void on_finish(runx::TrialContext& trial) override {
    trial.metric("fused_optimizer.steps", static_cast<double>(steps_));
  }

 private:
  /// The kernel this technique uses on `device`: the one asked for, or with 'auto' the fused one
  /// where LibTorch has it (FusedOptimizerSupported), else foreach.
  Kernel KernelFor(const c10::Device& device) const {
    if (kernel_param_ == "fused") return Kernel::kFused;
    if (kernel_param_ == "foreach") return Kernel::kForeach;
    return runx::compat::FusedOptimizerSupported(device.type(), nullptr) ? Kernel::kFused : Kernel::kForeach;
  }

  void Update() {
    torch::NoGradGuard no_grad;
    auto& groups = optimizer_->param_groups();
    for (size_t g = 0; g < groups.size(); ++g) {
      auto& params = groups[g].params();
      auto& states = state_[g];
      states.resize(params.size());
      Live b;
      for (size_t i = 0; i < params.size(); ++i) {
        if (!params[i].grad().defined()) continue;
        b.params.push_back(params[i]);
        b.grads.push_back(params[i].grad());
        b.states.push_back(&states[i]);
      }
      if (b.params.empty()) continue;
      if (adamw_)
        AdamW(static_cast<torch::optim::AdamWOptions&>(groups[g].options()), b);
      else
        Sgd(static_cast<torch::optim::SGDOptions&>(groups[g].options()), b);
    }
    for (auto& group : groups)
      for (auto& p : group.params()) p.mutable_grad() = torch::Tensor();  // set_to_none
    ++steps_;
  }

  /// torch::optim::SGD: d = g + wd*p; buf = d on the first step, else m*buf + (1-dampening)*d;
  /// d = nesterov ? d + m*buf : buf; p -= lr*d.
  void Sgd(const torch::optim::SGDOptions& o, Live& b) {
    const double lr = o.lr(), m = o.momentum(), damp = o.dampening(), wd = o.weight_decay();
    // Parameters whose momentum buffer starts this step, and those that have one.
    Live fresh, running;
    for (size_t i = 0; i < b.params.size(); ++i) {
      Live& to = m != 0 && !b.states[i]->momentum.defined() ? fresh : running;
      to.params.push_back(b.params[i]);
      to.grads.push_back(b.grads[i]);
      to.states.push_back(b.states[i]);
    }
    if (kernel_ == Kernel::kFused) {
      for (Live* part : {&fresh, &running}) {
        if (part->params.empty()) continue;
        std::vector<torch::Tensor> bufs;
        for (size_t i = 0; m != 0 && i < part->params.size(); ++i) {
          auto& buf = part->states[i]->momentum;
          if (!buf.defined()) buf = torch::empty_like(part->grads[i]);
          bufs.push_back(buf);
        }
        runx::compat::FusedSgd(part->params, part->grads, bufs, wd, m, lr, damp, o.nesterov(), part == &fresh);
      }
      return;
    }
    auto& d = b.grads;  // the gradients are dropped after the step: reuse them in place
    if (wd != 0) at::_foreach_add_(d, b.params, wd);
    std::vector<torch::Tensor> step = d;
    if (m != 0) {
      for (size_t i = 0; i < fresh.params.size(); ++i) fresh.states[i]->momentum = fresh.grads[i].clone();
      if (!running.params.empty()) {
        std::vector<torch::Tensor> bufs;
        for (auto* s : running.states) bufs.push_back(s->momentum);
        at::_foreach_mul_(bufs, m);
        at::_foreach_add_(bufs, running.grads, 1 - damp);
      }
      std::vector<torch::Tensor> bufs;
      for (auto* s : b.states) bufs.push_back(s->momentum);
      if (o.nesterov())
        at::_foreach_add_(d, bufs, m);
      else
        step = bufs;
    }
    at::_foreach_add_(b.params, step, -lr);
  }

  /// torch::optim::AdamW: p *= 1 - lr*wd; m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g*g;
  /// p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps).
  void AdamW(const torch::optim::AdamWOptions& o, Live& b) {
    if (o.amsgrad()) throw std::invalid_argument("amsgrad has no foreach/fused update here");
    const double lr = o.lr(), wd = o.weight_decay(), eps = o.eps();
    const double b1 = std::get<0>(o.betas()), b2 = std::get<1>(o.betas());
    std::vector<torch::Tensor> m, v, steps;
    for (size_t i = 0; i < b.params.size(); ++i) {
      auto* s = b.states[i];
      if (!s->exp_avg.defined()) {
        s->exp_avg = torch::zeros_like(b.params[i], at::MemoryFormat::Preserve);
        s->exp_avg_sq = torch::zeros_like(b.params[i], at::MemoryFormat::Preserve);
        if (kernel_ == Kernel::kFused) s->step_tensor = torch::zeros({}, b.params[i].options().dtype(torch::kFloat));
      }
      m.push_back(s->exp_avg);
      v.push_back(s->exp_avg_sq);
      if (kernel_ == Kernel::kFused) steps.push_back(s->step_tensor);
    }
    if (kernel_ == Kernel::kFused) {
      at::_foreach_add_(steps, 1);  // on the device: capturable, and what the kernel reads
      runx::compat::FusedAdamW(b.params, b.grads, m, v, steps, lr, b1, b2, wd, eps);
      return;
    }
    std::vector<c10::Scalar> sqrt_bc2, neg_step_size;
    for (auto* s : b.states) {
      ++s->step;
      const double bc1 = 1 - std::pow(b1, static_cast<double>(s->step));
      const double bc2 = 1 - std::pow(b2, static_cast<double>(s->step));
      sqrt_bc2.emplace_back(std::sqrt(bc2));
      neg_step_size.emplace_back(-lr / bc1);
    }
    if (wd != 0) at::_foreach_mul_(b.params, 1 - lr * wd);
    at::_foreach_mul_(m, b1);
    at::_foreach_add_(m, b.grads, 1 - b1);
    at::_foreach_mul_(v, b2);
    at::_foreach_addcmul_(v, b.grads, b.grads, 1 - b2);
    auto denom = at::_foreach_sqrt(v);
    at::_foreach_div_(denom, sqrt_bc2);
    at::_foreach_add_(denom, eps);
    at::_foreach_addcdiv_(b.params, m, denom, neg_step_size);
  }

  std::string kernel_param_ = "auto";
  Kernel kernel_ = Kernel::kForeach;
  bool adamw_ = false, started_ = false;
  torch::optim::Optimizer* optimizer_ = nullptr;
  std::vector<std::vector<ParamState>> state_;  ///< per param group, per parameter
  int64_t steps_ = 0;
};

}  // namespace

RUNX_PLUGIN(fused_optimizer, "1.1.0", "SGD/AdamW updates with multi-tensor (foreach) or fused kernels", FusedOptimizer)
