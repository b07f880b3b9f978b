// channels_last: keeps 4-D weights, buffers and input batches in NHWC memory order, so cuDNN,
// MPS and oneDNN pick their channels-last convolution kernels (the big win with bf16/fp16 on
// tensor cores). The logical shape stays NCHW; only the strides change.
#include <torch/torch.h>

#include "runx/plugin_export.h"

namespace {

class ChannelsLast : public runx::Technique {
 public:
  void configure(const nlohmann::json& params) override { inputs_ = params.value("inputs", true); }

  runx::CheckResult check(const runx::TrialPlan& plan) override {
    if (plan.config().value("model", nlohmann::json::object()).value("name", "") == "aoti")
      return runx::CheckResult::Incompatible(
          "an AOTInductor package has its memory format compiled in: make a channels_last package instead "
          "(tools/aoti_package.py --channels-last)");
    const auto& data = plan.config().at("data");
    if (data.value("source", "") == "text")
      return runx::CheckResult::Incompatible(
          "channels_last reorders the channels of 4-D image tensors; text data gives token ids [batch, seq_len] "
          "and gpt has no 4-D weights");
    const size_t dims = data.value("source", "") == "synthetic" ? data.at("shape").size() : 3;
    if (dims != 3)
      return runx::CheckResult::Incompatible(
          "channels_last needs image samples [channels, height, width]; data.shape has " + std::to_string(dims) +
          " dimension(s)");
    return runx::CheckResult::Ok();
  }

  void on_model(torch::nn::Module& model, runx::TrialContext& trial) override {
    int64_t converted = 0;
    torch::NoGradGuard no_grad;
    for (auto& p : model.parameters())
      if (p.dim() == 4) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast)), ++converted;
    for (auto& b : model.buffers())
      if (b.dim() == 4) b.set_data(b.contiguous(at::MemoryFormat::ChannelsLast)), ++converted;
    trial.metric("channels_last_tensors", static_cast<double>(converted));
    if (converted == 0) trial.note("channels_last: the model has no 4-D weights; only inputs change");
  }

  void on_batch(runx::Batch& batch, runx::TrialContext&) override {
    // Float images only: integer inputs (token ids) pass unchanged.
    if (inputs_ && batch.input.dim() == 4 && batch.input.is_floating_point())
      batch.input = batch.input.contiguous(at::MemoryFormat::ChannelsLast);
  }

 private:
  bool inputs_ = true;
};

}  // namespace

RUNX_PLUGIN(channels_last, "1.0.0", "NHWC memory format for 4-D weights and input batches", ChannelsLast)
