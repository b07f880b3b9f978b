// anomaly: finds non-finite numbers in training. Every `every` steps it measures the NaN ratio,
// the Inf ratio and the mean of the finite values of the loss, of the gradients (all parameters
// together, and per parameter on request) and, on request, of the model's output logits; it
// records them as per-step metrics and, on a non-finite value, warns, skips the optimizer update
// or ends the trial with status nan.
//
// Where it sits in the step (wrap_order 90, inside amp at 100): it wraps `forward` to keep the
// loss (and compute the logits) and `update` to look at the gradients just before the optimizer
// runs. Inside amp the gradients it sees are already unscaled, and a step amp skips for an fp16
// overflow (its loss scaling at work, not an anomaly) never reaches it. Checking in `backward`
// would not work with amp: amp replaces `backward` with its scaled one and never calls the inner.
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "runx/compat.h"
#include "runx/plugin_export.h"

namespace {

enum class Policy { kWarn, kSkipStep, kAbort };
constexpr int kMaxNotes = 10;  ///< anomalies noted in the trial's log; the metrics record them all

/// NaN ratio, Inf ratio and mean of the finite values of some tensors taken together.
struct Figures {
  double nan_ratio = 0, inf_ratio = 0, mean = std::nan("");
  bool finite() const { return nan_ratio == 0 && inf_ratio == 0; }
};

/// [NaN count, Inf count, sum of the finite values] of `t`, on its device, as `acc`.
torch::Tensor Counts(const torch::Tensor& t, c10::ScalarType acc) {
  const auto x = t.detach();
  const auto nan = x.isnan(), inf = x.isinf();
  return torch::stack({nan.sum().to(acc), inf.sum().to(acc), x.masked_fill(nan.logical_or(inf), 0).sum(acc)});
}

Figures Summarize(const double* counts, int64_t numel) {
  Figures f;
  if (numel == 0) return f;
  const double n = static_cast<double>(numel), finite = n - counts[0] - counts[1];
  f.nan_ratio = counts[0] / n;
  f.inf_ratio = counts[1] / n;
  if (finite > 0) f.mean = counts[2] / finite;
  return f;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

/// What one check found.
struct Found {
  bool have = false, loss_seen = false, grads_seen = false, logits_seen = false, skipped = false;
  Figures loss, grads, logits;
  std::vector<std::pair<std::string, Figures>> params;
};

class Anomaly : public runx::Technique {
 public:
  void configure(const nlohmann::json& p) override {
    every_ = p.value("every", int64_t{1});
    const std::string on = p.value("on_anomaly", std::string("warn"));
    policy_ = on == "abort" ? Policy::kAbort : on == "skip_step" ? Policy::kSkipStep : Policy::kWarn;
    per_parameter_ = p.value("per_parameter", false);
    activations_ = p.value("activations", false);
  }

  runx::CheckResult check(const runx::TrialPlan& plan) override {
    if (plan.task() == runx::Task::kInfer)
      return runx::CheckResult::Incompatible(
          "anomaly checks the loss and the gradients of training steps; task 'infer' has neither");
    if (plan.technique("cuda_graphs"))
      return runx::CheckResult::Incompatible(
          "cuda_graphs replays the captured step as a whole: there is no point between backward and the "
          "optimizer update to look at the gradients");
    return runx::CheckResult::Ok();
  }

  int wrap_order() const override { return 90; }

  runx::Step wrap_step(runx::Step step, runx::TrialContext& trial) override {
    trial_ = &trial;
    acc_ = trial.device().is_mps() ? torch::kFloat : torch::kDouble;  // MPS has no float64
    auto forward = std::move(step.forward);
    step.forward = [this, forward](runx::Batch& b) {
      torch::Tensor loss = forward(b);
      if (CheckStep()) {
        loss_ = loss.detach();
        if (activations_) logits_ = Logits(b.input);
      }
      return loss;
    };
    auto update = std::move(step.update);
    step.update = [this, update] {
      if (!CheckStep()) return update();
      found_ = Check(true);
      if (policy_ == Policy::kSkipStep && found_.grads_seen && !found_.grads.finite()) {
        for (auto& group : trial_->optimizer().param_groups())
          for (auto& p : group.params()) p.mutable_grad() = torch::Tensor();
        found_.skipped = true;
        return;
      }
      update();
    };
    return step;
  }

  void on_step_end(const runx::StepStats& stats, runx::TrialContext& trial) override {
    const bool checked = CheckStep();
    ++steps_done_;
    if (!checked) return;
    if (!found_.have) {  // the update was not reached: amp skipped an overflowing fp16 step
      if (!loss_.defined()) loss_ = stats.loss.detach();
      found_ = Check(false);
    } else if (!found_.loss_seen) {  // the forward was not ours to wrap
      loss_ = stats.loss.detach();
      found_.loss = Check(false).loss;
      found_.loss_seen = true;
    }
    Report(stats.step, trial);
    found_ = Found{};
  }

  void on_finish(runx::TrialContext& trial) override {
    trial.metric("anomaly.checked_steps", static_cast<double>(checked_));
    trial.metric("anomaly.anomalous_steps", static_cast<double>(anomalous_));
    if (policy_ == Policy::kSkipStep) trial.metric("anomaly.skipped_steps", static_cast<double>(skipped_));
  }

 private:
  bool CheckStep() const { return steps_done_ % every_ == 0; }

  /// The logits of the model on `input`, without autograd; BatchNorm running statistics (and any
  /// other buffer) are put back, so that the extra pass does not train.
  torch::Tensor Logits(const torch::Tensor& input) {
    torch::NoGradGuard no_grad;
    auto buffers = trial_->model().buffers();
    std::vector<torch::Tensor> saved;
    for (auto& b : buffers) saved.push_back(b.clone());
    auto out = trial_->forward(input).detach();
    for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(saved[i]);
    return out;
  }

  /// Measures the kept loss and logits and, with `grads`, the gradients: one transfer to the host.
  Found Check(bool grads) {
    Found f;
    f.have = true;
    std::vector<torch::Tensor> rows;
    std::vector<int64_t> sizes;
    std::vector<std::string> names;
    if (loss_.defined()) rows.push_back(Counts(loss_, acc_)), sizes.push_back(loss_.numel());
    if (logits_.defined()) rows.push_back(Counts(logits_, acc_)), sizes.push_back(logits_.numel());
    const size_t first_grad = rows.size();
    if (grads) {
      for (const auto& item : trial_->model().named_parameters()) {
        const auto& g = item.value().grad();
        if (!g.defined()) continue;
        rows.push_back(Counts(g, acc_));
        sizes.push_back(g.numel());
        names.push_back(item.key());
      }
    }
    if (rows.empty()) return f;
    const auto host = torch::stack(rows).to(torch::kCPU).to(torch::kDouble).contiguous();
    const double* c = host.data_ptr<double>();
    size_t row = 0;
    if (loss_.defined()) f.loss_seen = true, f.loss = Summarize(c + 3 * row++, sizes[0]);
    if (logits_.defined()) f.logits_seen = true, f.logits = Summarize(c + 3 * row, sizes[row]), ++row;
    if (grads && rows.size() > first_grad) {
      f.grads_seen = true;
      double total[3] = {0, 0, 0};
      int64_t numel = 0;
      for (size_t i = first_grad; i < rows.size(); ++i) {
        for (int k = 0; k < 3; ++k) total[k] += c[3 * i + k];
        numel += sizes[i];
        if (per_parameter_) f.params.emplace_back(names[i - first_grad], Summarize(c + 3 * i, sizes[i]));
      }
      f.grads = Summarize(total, numel);
    }
    loss_ = torch::Tensor();
    logits_ = torch::Tensor();
    return f;
  }

  void Metrics(const std::string& prefix, const Figures& f, int64_t step, runx::TrialContext& trial) {
    trial.metric(prefix + "nan_ratio", f.nan_ratio, "", step);
    trial.metric(prefix + "inf_ratio", f.inf_ratio, "", step);
    if (!std::isnan(f.mean)) trial.metric(prefix + "mean", f.mean, "", step);
  }

  void Report(int64_t step, runx::TrialContext& trial) {
    ++checked_;
    if (found_.loss_seen) Metrics("anomaly.loss_", found_.loss, step, trial);
    if (found_.logits_seen) Metrics("anomaly.logits_", found_.logits, step, trial);
    if (found_.grads_seen) Metrics("anomaly.grad_", found_.grads, step, trial);
    for (const auto& [name, f] : found_.params) Metrics("anomaly.grad." + name + ".", f, step, trial);
    if (!found_.grads_seen && !grads_missing_noted_) {
      grads_missing_noted_ = true;
      trial.note("anomaly: step " + std::to_string(step) +
                 ": no gradients seen (the optimizer update was skipped "
                 "by an inner technique, or replaced by an outer one)");
    }

    const char* what = nullptr;
    const Figures* bad = nullptr;
    if (!found_.loss.finite())
      what = "loss", bad = &found_.loss;
    else if (found_.logits_seen && !found_.logits.finite())
      what = "logits", bad = &found_.logits;
    else if (found_.grads_seen && !found_.grads.finite())
      what = "gradients", bad = &found_.grads;
    if (!bad) return;
    ++anomalous_;
    if (found_.skipped) ++skipped_;
    trial.metric("anomaly.found", 1.0, "", step);
    const std::string msg = std::string(what) + ": NaN ratio " + Num(bad->nan_ratio) + ", Inf ratio " +
                            Num(bad->inf_ratio) + " at step " + std::to_string(step);
    if (policy_ == Policy::kAbort) {
      trial.abort(runx::TrialStatus::kNan, "anomaly: " + msg);
      return;
    }
    if (anomalous_ <= kMaxNotes) trial.note("anomaly: " + msg + (found_.skipped ? "; optimizer update skipped" : ""));
    if (anomalous_ == kMaxNotes) trial.note("anomaly: further anomalies are recorded as metrics only (anomaly.found)");
  }

  int64_t every_ = 1;
  Policy policy_ = Policy::kWarn;
  bool per_parameter_ = false, activations_ = false, grads_missing_noted_ = false;
  runx::TrialContext* trial_ = nullptr;
  c10::ScalarType acc_ = torch::kDouble;
  int64_t steps_done_ = 0, checked_ = 0, anomalous_ = 0, skipped_ = 0;
  torch::Tensor loss_, logits_;  ///< kept by the wrapped forward for this step's check
  Found found_;
};

}  // namespace

RUNX_PLUGIN(anomaly, "1.1.0", "NaN/Inf detection in loss, gradients and logits: warn, skip the step or abort", Anomaly)
