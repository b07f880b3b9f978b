// RunnerContext::probe_batch: auto_batch's trial runs of a batch size, undone afterwards.
#include <chrono>

#include "base/statistics.h"
#include "base/text.h"
#include "outcome/failure.h"
#include "trial/context.h"
#include "trial/device.h"

namespace runx::engine {
namespace {

/// The median time of `steps` timed steps on `batch` after one untimed step.
double TimeProbeSteps(Step& step, Batch& batch, int steps, c10::Device device) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> ms;
  for (int i = 0; i <= steps; ++i) {
    const auto t0 = Clock::now();
    torch::Tensor loss = step.forward(batch);
    step.backward(loss);
    step.update();
    Synchronize(device);
    if (i > 0) ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return ms.empty() ? 0.0 : base::Percentile(ms, 0.5);
}

/// `n` random samples of what `spec` declares: standard normal floats, or token ids below the
/// vocabulary; targets below num_classes.
Batch RandomBatch(const SampleSpec& spec, int64_t n, c10::Device device) {
  const auto with_batch = [n](const std::vector<int64_t>& sample) {
    std::vector<int64_t> shape{n};
    shape.insert(shape.end(), sample.begin(), sample.end());
    return shape;
  };
  const auto on = torch::TensorOptions().device(device);
  const auto input = spec.tokens()
                         ? torch::randint(spec.num_classes, with_batch(spec.input_shape), on.dtype(spec.input_dtype))
                         : torch::randn(with_batch(spec.input_shape), on.dtype(spec.input_dtype));
  return {input, torch::randint(spec.num_classes, with_batch(spec.target_shape), on.dtype(spec.target_dtype))};
}

}  // namespace

ProbeResult RunnerContext::probe_batch(int64_t n, int steps) {
  if (!in_train_begin_) throw std::logic_error("probe_batch is only allowed in on_train_begin");
  ProbeResult r;
  r.batch_size = n;
  auto tensors = [this] {
    std::vector<torch::Tensor> all = model_->parameters();
    for (auto& b : model_->buffers()) all.push_back(b);
    return all;
  };
  if (snapshot_.empty()) {
    torch::NoGradGuard no_grad;
    for (auto& t : tensors()) snapshot_.push_back(t.detach().clone());
  }
  ReleaseCache(device_);
  Synchronize(device_);
  ResetPeakMemory(device_);
  try {
    Batch batch = RandomBatch(data_->sample_spec(), n, device_);
    ForEachTechnique(active_, "on_batch", [&](Technique& t) { t.on_batch(batch, *this); });
    r.step_ms = TimeProbeSteps(*step_, batch, steps, device_);
    r.fits = true;
    r.peak_bytes = PeakMemoryBytes(device_);
  } catch (const std::bad_alloc&) {
    r.error = std::string(kHostOutOfMemory);
  } catch (const std::exception& e) {
    if (!IsOutOfMemory(e.what())) throw;
    r.error = base::FirstLine(e.what());
  }
  // Undo the probe: weights, buffers, gradients and optimizer state as they were.
  {
    torch::NoGradGuard no_grad;
    auto all = tensors();
    for (size_t i = 0; i < all.size() && i < snapshot_.size(); ++i) all[i].copy_(snapshot_[i]);
    for (auto& p : model_->parameters()) p.mutable_grad() = torch::Tensor();
    if (optimizer_) optimizer_->state().clear();
  }
  Synchronize(device_);
  ReleaseCache(device_);
  return r;
}

}  // namespace runx::engine
