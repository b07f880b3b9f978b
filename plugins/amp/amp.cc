// amp: automatic mixed precision. Runs the forward pass (model and loss) under LibTorch's
// autocast to fp16 or bf16 on CUDA, MPS or the CPU, and for fp16 scales the loss dynamically,
// the way torch.amp.GradScaler does: unscale the gradients, skip the optimizer step when any is
// inf/NaN and back the scale off, grow it after `growth_interval` clean steps.
#include <cmath>
#include <optional>

#include <torch/torch.h>

#include "runx/compat.h"
#include "runx/plugin_export.h"

namespace {

c10::ScalarType ParseDtype(const std::string& s) { return s == "fp16" ? c10::kHalf : c10::kBFloat16; }

/// Dynamic loss scaling. On CUDA it uses LibTorch's fused amp kernels; elsewhere (LibTorch 1.13
/// has no CPU kernels for them) the same arithmetic with plain tensor ops.
class GradScaler {
 public:
  GradScaler(double init, double growth, double backoff, int64_t interval, bool dynamic)
      : init_(init), growth_(growth), backoff_(backoff), interval_(interval), dynamic_(dynamic) {}

  void Bind(const c10::Device& device) {
    device_ = device;
    auto opts = torch::TensorOptions().device(device).dtype(torch::kFloat);
    scale_ = torch::full({1}, init_, opts);
    tracker_ = torch::zeros({1}, opts.dtype(torch::kInt));
    found_inf_ = torch::zeros({1}, opts);
  }
  torch::Tensor Scale(const torch::Tensor& loss) const { return loss * scale_.to(loss.scalar_type()); }

  /// Unscales the gradients in place; returns true when they are all finite (synchronizes: the
  /// step must know whether to skip, as in PyTorch's GradScaler).
  bool UnscaleAndCheck(torch::optim::Optimizer& opt) {
    std::vector<torch::Tensor> grads;
    for (auto& g : opt.param_groups())
      for (auto& p : g.params())
        if (p.grad().defined()) grads.push_back(p.grad());
    found_inf_.zero_();
    // The reciprocal in double, as PyTorch's GradScaler, except on MPS, which has no float64.
    auto inv = scale_.is_mps() ? scale_.reciprocal() : scale_.to(torch::kDouble).reciprocal().to(torch::kFloat);
    if (device_.is_cuda()) {
      at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv);
    } else {
      for (auto& g : grads) {
        found_inf_ = torch::maximum(found_inf_, g.isfinite().logical_not().any().to(torch::kFloat).reshape({1}));
        g.mul_(inv.to(g.scalar_type()));
      }
    }
    return found_inf_.item<float>() == 0.0f;
  }

  void Update() {
    if (!dynamic_) return;
    if (device_.is_cuda()) {
      at::_amp_update_scale_(scale_, tracker_, found_inf_, growth_, backoff_, interval_);
      return;
    }
    if (found_inf_.item<float>() > 0) {
      scale_.mul_(backoff_);
      tracker_.zero_();
    } else if (tracker_.add_(1).item<int>() >= interval_) {
      scale_.mul_(growth_);
      tracker_.zero_();
    }
  }
  double scale() const { return scale_.item<double>(); }

 private:
  double init_, growth_, backoff_;
  int64_t interval_;
  bool dynamic_;
  c10::Device device_{c10::DeviceType::CPU};
  torch::Tensor scale_, tracker_, found_inf_;
};

class Amp : public runx::Technique {
 public:
  void configure(const nlohmann::json& params) override { params_ = params; }

  /// dtype decided (the experiment's precision when fp16/bf16, else bf16) and loss_scale decided:
  /// "dynamic", "none" or the static scale. fp16 needs loss scaling (its exponent range underflows
  /// small gradients); bf16 has fp32's range; inference has no gradients.
  nlohmann::json resolve(const nlohmann::json& params, const runx::TrialPlan& plan) override {
    (void)params;  // configure's, kept in params_
    return Settings(plan.config());
  }

  runx::CheckResult check(const runx::TrialPlan& plan) override {
    if (plan.config().value("model", nlohmann::json::object()).value("name", "") == "aoti")
      return runx::CheckResult::Incompatible(
          "an AOTInductor package has its precision compiled in (autocast does not reach its kernels): make a "
          "bf16 or fp16 package instead (tools/aoti_package.py --dtype bf16)");
    const std::string precision = plan.config().value("precision", "fp32");
    const std::string dtype = Dtype(plan.config());
    if ((precision == "fp16" || precision == "bf16") && dtype != precision)
      return runx::CheckResult::Incompatible("precision '" + precision + "' conflicts with amp dtype '" + dtype + "'");
    std::string why;
    if (!runx::compat::AutocastSupported(plan.device().type(), ParseDtype(dtype), &why))
      return runx::CheckResult::Incompatible(dtype + " on " + plan.device().str() + ": " + why);
    const auto asked =
        params_.is_object() ? params_.value("loss_scale", nlohmann::json("auto")) : nlohmann::json("auto");
    if (plan.task() == runx::Task::kInfer && asked != "auto" && asked != "none")
      return runx::CheckResult::Incompatible(
          "loss scaling protects training gradients; task 'infer' has none: remove 'loss_scale' (autocast alone "
          "applies)");
    return runx::CheckResult::Ok();
  }

  void on_setup(runx::TrialContext& trial) override {
    const nlohmann::json settings = Settings(trial.config());
    const std::string dtype = settings.at("dtype");
    dtype_ = ParseDtype(dtype);
    const auto ls = settings.at("loss_scale");
    if (ls != "none") {
      const bool dynamic = !ls.is_number();
      scaler_.emplace(ls.is_number() ? ls.get<double>() : params_.value("init_scale", 65536.0),
                      params_.value("growth_factor", 2.0), params_.value("backoff_factor", 0.5),
                      params_.value("growth_interval", 2000), dynamic);
      scaler_->Bind(trial.device());
    }
    trial.note("amp: autocast to " + dtype + (scaler_ ? ", loss scaling on" : ", no loss scaling"));
  }

  int wrap_order() const override { return 100; }

  runx::Step wrap_step(runx::Step step, runx::TrialContext& trial) override {
    const auto device_type = trial.device().type();
    const auto dtype = dtype_;
    auto inner = std::move(step.forward);
    step.forward = [inner, device_type, dtype](runx::Batch& b) {
      runx::compat::AutocastScope scope(device_type, dtype);
      return inner(b);
    };
    if (scaler_) {
      auto* scaler = &*scaler_;
      auto* t = &trial;
      auto inner_update = std::move(step.update);
      step.backward = [scaler](torch::Tensor& loss) { scaler->Scale(loss).backward(); };
      step.update = [this, scaler, t, inner_update] {
        const bool finite = scaler->UnscaleAndCheck(t->optimizer());
        if (finite) {
          inner_update();
        } else {
          ++skipped_;
          for (auto& g : t->optimizer().param_groups())  // drop the bad gradients
            for (auto& p : g.params()) p.mutable_grad() = torch::Tensor();
        }
        scaler->Update();
        ++steps_;
        const double s = scaler->scale();
        if (s != last_scale_) t->metric("loss_scale", s, "", steps_), last_scale_ = s;
      };
    }
    return step;
  }

  void on_finish(runx::TrialContext& trial) override {
    if (!scaler_) return;
    trial.metric("loss_scale_final", scaler_->scale());
    trial.metric("amp_skipped_steps", static_cast<double>(skipped_));
  }

 private:
  /// The parameters with dtype and loss_scale decided for the trial of `config` (resolve).
  nlohmann::json Settings(const nlohmann::json& config) const {
    nlohmann::json settings = params_.is_object() ? params_ : nlohmann::json::object();
    const std::string dtype = Dtype(config);
    settings["dtype"] = dtype;
    if (runx::IsInference(config))
      settings["loss_scale"] = "none";  // no gradients to protect (check refuses a scale asked for)
    else if (settings.value("loss_scale", nlohmann::json("auto")) == "auto")
      settings["loss_scale"] = dtype == "fp16" ? "dynamic" : "none";
    return settings;
  }
  std::string Dtype(const nlohmann::json& config) const {
    if (params_.contains("dtype")) return params_["dtype"];
    const std::string precision = config.value("precision", "fp32");
    return precision == "fp16" ? "fp16" : "bf16";
  }
  nlohmann::json params_ = nlohmann::json::object();
  c10::ScalarType dtype_ = c10::kBFloat16;
  std::optional<GradScaler> scaler_;
  int64_t steps_ = 0, skipped_ = 0;
  double last_scale_ = std::nan("");
};

}  // namespace

RUNX_PLUGIN(amp, "1.1.0", "mixed precision: autocast to fp16/bf16, dynamic loss scaling for fp16", Amp)
