// cuda_graphs: runx's counterpart of graph mode. After `warmup` eager steps on a side stream, the
// whole step (forward, loss, backward, optimizer update, gradient reset) is captured once into a
// CUDA graph with static input tensors; every later step copies the batch into them and replays
// the graph: one launch instead of one per kernel, which is what a launch-bound model (small
// layers, small batches) spends its time on. A new input shape re-captures (auto_batch probes).
// For `task: infer` the captured step is the forward pass alone (same warm-up, same replay).
// See docs/techniques.md#cuda_graphs.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "runx/plugin.h"
#include "runx/plugin_export.h"

#ifdef RUNX_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace {

class CudaGraphs : public runx::Technique {
 public:
  void configure(const nlohmann::json& params) override { warmup_ = params.value("warmup", 3); }

  runx::CheckResult check(const runx::TrialPlan& plan) override {
#ifndef RUNX_WITH_CUDA
    (void)plan;
    return runx::CheckResult::Incompatible("this runx was built against a LibTorch without CUDA: no CUDA graphs");
#else
    if (!plan.device().is_cuda())
      return runx::CheckResult::Incompatible(
          fmt::format("CUDA graphs need a CUDA device, not {} (MPS and the CPU have no graph capture in LibTorch)",
                      plan.device().str()));
    if (plan.task() == runx::Task::kInfer) return runx::CheckResult::Ok();  // a forward pass: no optimizer, no scaler
    const auto train = plan.config().value("train", nlohmann::json::object());
    const auto opt = train.value("optimizer", nlohmann::json::object());
    if (const std::string optimizer = opt.value("name", "sgd"); optimizer != "sgd") {
      // fused_optimizer's fused AdamW counts its steps in a device tensor: capturable.
      const nlohmann::json* fused = plan.technique("fused_optimizer");
      const bool device_step = optimizer == "adamw" && fused && fused->value("kernel", "") == "fused";
      if (!device_step)
        return runx::CheckResult::Incompatible(
            "LibTorch's C++ Adam/AdamW keep the step count on the host: a captured graph would freeze the bias "
            "correction; use optimizer sgd, or adamw with 'fused_optimizer: {kernel: fused}' (LibTorch >= 2.4), "
            "which counts steps on the device");
    }
    // amp decides whether it scales the loss (resolve): any scaling reads the host.
    const nlohmann::json* amp = plan.technique("amp");
    if (amp && amp->value("loss_scale", nlohmann::json("none")) != "none")
      return runx::CheckResult::Incompatible(
          "loss scaling reads on the host whether each step's gradients are finite (to skip the update): not "
          "capturable; use bf16 without loss scaling");
    if (plan.technique("anomaly"))
      return runx::CheckResult::Incompatible(
          "anomaly reads gradients on the host between backward and update; a captured step has no such point");
    return runx::CheckResult::Ok();
#endif
  }

  int wrap_order() const override { return 900; }

#ifdef RUNX_WITH_CUDA
  runx::Step wrap_step(runx::Step step, runx::TrialContext& trial) override {
    auto state = std::make_shared<State>();
    state->inner = std::move(step);
    state->warmup = warmup_;
    state->device = trial.device();
    state->train = !runx::IsInference(trial.config());
    state->trial = &trial;
    state_ = state;
    runx::Step out;
    out.forward = [state](runx::Batch& b) { return state->Run(b); };
    out.backward = [](torch::Tensor&){};
    out.update = []{};
    return out;
  }

  void on_finish(runx::TrialContext& trial) override {
    if (!state_) return;
    trial.metric("cuda_graphs.captures", static_cast<double>(state_->captures));
    trial.metric("cuda_graphs.replays", static_cast<double>(state_->replays));
    trial.metric("cuda_graphs.eager_steps", static_cast<double>(state_->eager));
  }

 private:
  struct State {
    runx::Step inner;
    int warmup = 3;
    c10::Device device{c10::DeviceType::CUDA, 0};
    bool train = true;  ///< false: the step is a forward pass (task: infer), its result the output
    runx::TrialContext* trial = nullptr;
    std::unique_ptr<at::cuda::CUDAGraph> graph;
    torch::Tensor input, target, loss;
    int since_shape = 0;
    int64_t captures = 0, replays = 0, eager = 0;

    torch::Tensor Run(runx::Batch& b) {
      if (graph && (b.input.sizes() != input.sizes() || b.target.sizes() != target.sizes() ||
                    b.input.strides() != input.strides())) {
        graph.reset();  // a new shape (auto_batch probes): warm up and capture again
        since_shape = 0;
      }
      if (!graph) {
        auto current = c10::cuda::getCurrentCUDAStream(device.index());
        auto side = c10::cuda::getStreamFromPool(false, device.index());
        at::cuda::CUDAEvent ready;
        ready.record(current);
        ready.block(side);
        torch::Tensor loss_out;
        {
          c10::cuda::CUDAStreamGuard guard(side);
          if (since_shape < warmup) {
            loss_out = inner.forward(b);
            if (train) {
              inner.backward(loss_out);
              inner.update();
            }
            ++since_shape;
            ++eager;
          } else {
            Capture(b);
          }
        }
        at::cuda::CUDAEvent done;
        done.record(side);
        done.block(current);
        if (loss_out.defined()) return loss_out;
      }
      input.copy_(b.input, /*non_blocking=*/true);
      target.copy_(b.target, /*non_blocking=*/true);
      graph->replay();
      ++replays;
      return loss.clone();  // the graph overwrites `loss` (infer: the output) at the next replay
    }

    void Capture(runx::Batch& b) {
      input = b.input.clone(b.input.suggest_memory_format());
      target = b.target.clone();
      graph = std::make_unique<at::cuda::CUDAGraph>();
      graph->capture_begin();
      try {
        runx::Batch statics{input, target};
        loss = inner.forward(statics);
        if (train) {
          inner.backward(loss);
          inner.update();
        }
      } catch (const std::exception& e) {
        try {
          graph->capture_end();
        } catch (...) {
        }
        graph.reset();
        // CUDA refuses an operation inside the capture: the step synchronizes with the host (a
        // tensor read as a number, .item()) or does something else a graph cannot record. That is
        // this combination's nature, not an accident of this run.
        const std::string what = e.what();
        if (what.find("operation not permitted when stream is capturing") != std::string::npos ||
            what.find("cudaErrorStreamCapture") != std::string::npos)
          trial->abort(runx::TrialStatus::kIncompatible,
                       "cuda_graphs: the step cannot be captured: it does something a CUDA graph cannot record "
                       "(CUDA: operation not permitted when stream is capturing), typically a host synchronization "
                       "such as a tensor read as a number; the model's error follows in the detail");
        throw;
      } catch (...) {
        try {
          graph->capture_end();
        } catch (...) {
        }
        graph.reset();
        throw;
      }
      graph->capture_end();
      ++captures;
    }
  };
  std::shared_ptr<State> state_;
#endif
  int warmup_ = 3;
};

}  // namespace

RUNX_PLUGIN(cuda_graphs, "1.1.0", "capture the whole training step (or inference pass) as a CUDA graph and replay it",
            CudaGraphs)
