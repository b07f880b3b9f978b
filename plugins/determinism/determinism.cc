// determinism: makes a trial reproducible. Seeds every generator (CPU and CUDA through
// torch::manual_seed, MPS through compat), turns LibTorch's deterministic algorithms on, cuDNN
// autotuning off and cuDNN's deterministic mode on, TF32 off unless the experiment asks for it,
// pins the intra-op thread count when told, and sets CUBLAS_WORKSPACE_CONFIG on CUDA before cuBLAS
// is first used. Records what is in effect, read back from LibTorch.
#include <cstdlib>
#include <optional>
#include <string>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "runx/compat.h"
#include "runx/plugin_export.h"

namespace {

constexpr const char* kCublasVar = "CUBLAS_WORKSPACE_CONFIG";

bool DeterministicCublasConfig(const std::string& v) { return v == ":4096:8" || v == ":16:8"; }
std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}
const char* Bool(bool b) { return b ? "true" : "false"; }

class Determinism : public runx::Technique {
 public:
  void configure(const nlohmann::json& p) override {
    if (p.contains("seed")) seed_ = p["seed"].get<uint64_t>();
    algorithms_ = p.value("deterministic_algorithms", true);
    warn_only_ = p.value("warn_only", false);
    cudnn_deterministic_ = p.value("cudnn_deterministic", true);
    cudnn_benchmark_ = p.value("cudnn_benchmark", false);
    if (p.contains("tf32")) tf32_ = p["tf32"].get<bool>();
    if (p.contains("threads")) threads_ = p["threads"].get<int>();
    workspace_ = p.value("cublas_workspace_config", std::string(":4096:8"));
  }

  runx::CheckResult check(const runx::TrialPlan& plan) override {
    const auto& config = plan.config();
    const c10::Device device = plan.device();
    if (device.is_mps() && !RUNX_HAS_MPS_API)
      return runx::CheckResult::Incompatible("seeding the MPS generator needs LibTorch >= 2.1 (this is " +
                                             runx::compat::TorchVersionString() + ")");
    if (tf32_ && !*tf32_ && config.value("precision", "fp32") == "tf32")
      return runx::CheckResult::Incompatible("precision 'tf32' conflicts with determinism tf32: false");
    const std::string set = Env(kCublasVar);
    if (device.is_cuda() && algorithms_ && !warn_only_ && !set.empty() && !DeterministicCublasConfig(set))
      return runx::CheckResult::Incompatible(std::string(kCublasVar) + " is '" + set +
                                             "'; deterministic cuBLAS needs ':4096:8' or ':16:8'");
    return runx::CheckResult::Ok();
  }

  void on_setup(runx::TrialContext& trial) override {
    const auto& config = trial.config();
    seed_ = seed_.value_or(config.value("seed", uint64_t{0}));
    Seed();
    auto& ctx = at::globalContext();
    if (trial.device().is_cuda() && algorithms_ && !DeterministicCublasConfig(Env(kCublasVar)))
      setenv(kCublasVar, workspace_.c_str(), 1);  // cuBLAS reads it when its first handle is made
    runx::compat::SetDeterministicAlgorithms(algorithms_, warn_only_);
    ctx.setDeterministicCuDNN(cudnn_deterministic_);
    ctx.setBenchmarkCuDNN(cudnn_benchmark_);  // after the runner's, which turns it on for CUDA
    const bool tf32 = tf32_.value_or(config.value("precision", "fp32") == "tf32");
    ctx.setAllowTF32CuBLAS(tf32);
    ctx.setAllowTF32CuDNN(tf32);
    if (threads_) at::set_num_threads(*threads_);
    Record(trial);
    if (cudnn_benchmark_ && algorithms_)
      trial.note(
          "determinism: cudnn_benchmark is on: autotuning may choose other (deterministic) "
          "algorithms in another run, so results may differ between runs");
  }

  /// The runner builds the data and the model from the experiment's seed after on_setup; the
  /// training loop draws from ours: reseed before every batch until the first step has ended (the
  /// batch size probes of on_train_begin also draw batches), so that step 0 starts from `seed`.
  void on_batch(runx::Batch& batch, runx::TrialContext& trial) override {
    (void)batch, (void)trial;
    if (!started_) Seed();
  }
  void on_step_end(const runx::StepStats& stats, runx::TrialContext& trial) override {
    (void)stats, (void)trial;
    started_ = true;
  }

 private:
  void Seed() {
    torch::manual_seed(*seed_);  // CPU and every CUDA device
    mps_seeded_ = runx::compat::MpsManualSeed(*seed_);
  }

  void Record(runx::TrialContext& trial) const {
    const auto& ctx = at::globalContext();
    trial.record("determinism.seed", std::to_string(at::detail::getDefaultCPUGenerator().current_seed()));
    trial.record("determinism.deterministic_algorithms", Bool(ctx.deterministicAlgorithms()));
    trial.record("determinism.warn_only", Bool(ctx.deterministicAlgorithmsWarnOnly()));
    trial.record("determinism.cudnn_deterministic", Bool(ctx.deterministicCuDNN()));
    trial.record("determinism.cudnn_benchmark", Bool(ctx.benchmarkCuDNN()));
    trial.record("determinism.tf32_cublas", Bool(ctx.allowTF32CuBLAS()));
    trial.record("determinism.tf32_cudnn", Bool(ctx.allowTF32CuDNN()));
    trial.record("determinism.threads", std::to_string(at::get_num_threads()));
    if (trial.device().is_cuda()) trial.record("determinism.cublas_workspace_config", Env(kCublasVar));
    if (trial.device().is_mps()) trial.record("determinism.mps_seeded", Bool(mps_seeded_));
    trial.note("determinism: seed " + std::to_string(*seed_) + ", deterministic algorithms " +
               Bool(ctx.deterministicAlgorithms()) + ", cuDNN benchmark " + Bool(ctx.benchmarkCuDNN()) + ", TF32 " +
               Bool(ctx.allowTF32CuBLAS()) + ", " + std::to_string(at::get_num_threads()) + " threads");
  }

  std::optional<uint64_t> seed_;
  bool algorithms_ = true, warn_only_ = false, cudnn_deterministic_ = true, cudnn_benchmark_ = false;
  std::optional<bool> tf32_;
  std::optional<int> threads_;
  std::string workspace_ = ":4096:8";
  bool started_ = false, mps_seeded_ = false;
};

}  // namespace

RUNX_PLUGIN(determinism, "1.0.0",
            "reproducible trials: seeds, deterministic algorithms, no cuDNN autotuning, no TF32, fixed threads",
            Determinism)
