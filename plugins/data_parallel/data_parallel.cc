// data_parallel: one trial trained by `world_size` rank processes, as PyTorch DDP under torchrun
// does it. The runner starts the ranks (a parent process, not a plugin, spawns processes), joins
// them in a c10d process group (Gloo or NCCL) and gives each rank its shard of every global batch;
// this technique keeps the ranks' models identical: rank 0's weights broadcast at the start, and
// every step's gradients all-reduced in buckets that start during the backward pass and are
// averaged before the optimizer step (reducer.h).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "reducer.h"
#include "runx/compat.h"
#include "runx/plugin_export.h"

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

/// Replaces `t` by rank 0's (a copy through a contiguous buffer when it is not contiguous, e.g.
/// a channels_last weight).
void FromRankZero(runx::Collectives& ranks, const torch::Tensor& t) {
  torch::NoGradGuard no_grad;
  auto plain = t.detach();
  if (plain.is_contiguous()) {
    ranks.broadcast(plain, 0);
    return;
  }
  auto buffer = plain.contiguous();
  ranks.broadcast(buffer, 0);
  plain.copy_(buffer);
}

class DataParallel : public runx::Technique {
 public:
  void configure(const nlohmann::json& p) override {
    world_size_ = p.at("world_size").get<int>();
    backend_ = p.value("backend", "auto");
    bucket_mb_ = p.value("bucket_mb", 25.0);
    first_bucket_mb_ = p.value("first_bucket_mb", 1.0);
  }

  nlohmann::json resolve(const nlohmann::json& params, const runx::TrialPlan& plan) override {
    nlohmann::json out = params;
    out["world_size"] = world_size_;
    out["backend"] = backend_ == "auto" ? (plan.device().is_cuda() ? "nccl" : "gloo") : backend_;
    out["bucket_mb"] = bucket_mb_;
    out["first_bucket_mb"] = first_bucket_mb_;
    return out;
  }

  runx::CheckResult check(const runx::TrialPlan& plan) override {
    using runx::CheckResult;
    const c10::Device device = plan.device();
    const std::string backend = plan.technique("data_parallel")->value("backend", "gloo");
    if (plan.task() == runx::Task::kInfer)
      return CheckResult::Incompatible("data_parallel splits training batches over ranks; task: infer trains nothing");
    if (device.is_mps()) return CheckResult::Incompatible("c10d has no backend for MPS (gloo: cpu, cuda; nccl: cuda)");
    if (backend == "nccl" && !device.is_cuda())
      return CheckResult::Incompatible(
          fmt::format("backend nccl needs a CUDA device, not '{}'; use gloo", device.str()));
    if (backend == "nccl" && !runx::compat::kHasNccl)
      return CheckResult::Incompatible("this runx was built without NCCL (it needs LibTorch with CUDA and nccl.h)");
    if (backend == "gloo" && !runx::compat::kHasGloo)
      return CheckResult::Incompatible(
          "this runx was built without Gloo (its headers were missing: install "
          "libgloo-dev and rebuild)");
    if (device.is_cuda()) {
      const int first = device.has_index() ? device.index() : 0;
      const int count = static_cast<int>(torch::cuda::device_count());
      if (first + world_size_ > count)
        return CheckResult::Incompatible(fmt::format("world_size {} needs GPUs cuda:{}..cuda:{}, this machine has {}",
                                                     world_size_, first, first + world_size_ - 1, count));
    }
    if (plan.technique("auto_batch"))
      return CheckResult::Incompatible(
          "auto_batch probes one process's batch; with data_parallel set "
          "data.batch_size (per rank)");
    if (plan.technique("cuda_graphs"))
      return CheckResult::Incompatible("cuda_graphs cannot capture the ranks' gradient all-reduces");
    return CheckResult::Ok();
  }

  void on_model(torch::nn::Module& model, runx::TrialContext& trial) override {
    runx::Collectives& ranks = Ranks(trial);
    for (const auto& p : model.parameters()) FromRankZero(ranks, p);
    for (const auto& b : model.buffers()) FromRankZero(ranks, b);
  }

  runx::Step wrap_step(runx::Step step, runx::TrialContext& trial) override {
    runx::Collectives& ranks = Ranks(trial);
    reducer_ = std::make_unique<runx::data_parallel::GradientReducer>(trial.model().parameters(), ranks,
                                                                      static_cast<int64_t>(bucket_mb_ * kMiB),
                                                                      static_cast<int64_t>(first_bucket_mb_ * kMiB));
    auto* reducer = reducer_.get();
    step.backward = [backward = step.backward, reducer](torch::Tensor& loss) {
      reducer->BeginBackward();
      backward(loss);
      reducer->EndBackward();
    };
    return step;
  }

  /// Inside amp's loss scaling (which unscales the averaged gradients) and fused optimizers.
  int wrap_order() const override { return 800; }

  /// The buckets as they ended (rebuilt after the first step in the order the gradients came).
  void on_finish(runx::TrialContext& trial) override {
    if (!reducer_) return;
    trial.metric("data_parallel_buckets", static_cast<double>(reducer_->bucket_count()));
    trial.record("data_parallel.bucket_bytes", fmt::format("{}", fmt::join(reducer_->bucket_bytes(), ",")));
    trial.metric("data_parallel_overlapped_buckets", static_cast<double>(reducer_->started_during_backward()));
  }

 private:
  static runx::Collectives& Ranks(runx::TrialContext& trial) {
    runx::Collectives* ranks = trial.collectives();
    if (!ranks) throw std::logic_error("the runner started no ranks for this data_parallel trial");
    return *ranks;
  }

  int world_size_ = 1;
  std::string backend_ = "auto";
  double bucket_mb_ = 25, first_bucket_mb_ = 1;
  std::unique_ptr<runx::data_parallel::GradientReducer> reducer_;
};

}  // namespace

RUNX_PLUGIN(data_parallel, "1.0.0", "one trial as N rank processes: Gloo/NCCL all-reduce of bucketed gradients",
            DataParallel)
