#pragma once
/// The runx plugin API: the only interface between the runner and a technique plugin.
///
/// VERSIONING RULE: kPluginApiVersion is one integer, matched EXACTLY by the loader. Bump it on
/// ANY change to this file or to a type it uses (a new hook, a changed signature, a reordered
/// field, a different LibTorch ABI). A plugin built against another version is refused with both
/// versions named; there is no compatibility range. PluginDescriptor::api_version must stay the
/// first member forever so that the check itself is safe across versions.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "runx/collectives.h"
#include "runx/compat.h"
#include "runx/status.h"

namespace runx {

constexpr int kPluginApiVersion = 5;

/// One batch of training data, already on the trial's device.
struct Batch {
  torch::Tensor input;
  torch::Tensor target;
};

/// The step, split where techniques need to intervene. The runner composes
/// forward -> backward(loss) -> update() for every step. Techniques replace parts in wrap_step:
/// autocast wraps `forward`, loss scaling replaces `backward` and `update`, graph capture replaces
/// the whole sequence (and then sets `backward`/`update` to no-ops).
/// For `task: infer` (IsInference) the runner's step is the forward pass alone, under
/// c10::InferenceMode: `forward` returns the model's output (logits), `backward` and `update` do
/// nothing, and there is no optimizer.
struct Step {
  std::function<torch::Tensor(Batch&)> forward;  ///< the scalar loss (infer: the output); not synchronized
  std::function<void(torch::Tensor& loss)> backward;
  std::function<void()> update;  ///< optimizer step and zero_grad
};

/// The result of TrialContext::probe_batch: whether `batch_size` samples fit, and how fast.
struct ProbeResult {
  int64_t batch_size = 0;
  bool fits = false;
  double step_ms = 0;      ///< median of the timed probe steps (when fits)
  int64_t peak_bytes = 0;  ///< peak memory of the probe (device allocator; host: runx's counter)
  std::string error;       ///< the out-of-memory (or other) message when !fits
};

/// Training batches in host memory, for a technique that supplies the loader (make_loader).
class HostBatches {
 public:
  virtual ~HostBatches() = default;
  /// Batch number `index` counting across epochs, as CPU tensors. Thread-safe, deterministic.
  virtual Batch get(int64_t index) const = 0;
  virtual int64_t batch_size() const = 0;
  virtual int64_t batches_per_epoch() const = 0;
  /// Turns a batch already moved to the device into model input (e.g. uint8 images -> normalized
  /// float), so that the host side stays zero-copy and the transfer small.
  virtual Batch prepare(Batch on_device) const = 0;
};

/// What the training loop draws batches from. The runner's default loader fetches each host
/// batch when asked and copies it to the device; device-resident data bypasses loaders.
class Loader {
 public:
  virtual ~Loader() = default;
  /// The next batch, on the trial's device.
  virtual Batch next() = 0;
};

/// Whether a trial measures inference (`task: infer`) rather than training. `config` is the
/// resolved experiment (TrialContext::config, or TrialPlan::config).
inline bool IsInference(const nlohmann::json& config) { return config.value("task", "train") == "infer"; }

enum class Task { kTrain, kInfer };

/// What Technique::resolve and Technique::check see of a trial before anything of it runs: its
/// config, device and task, and the settings of every technique it runs. In check() those are the
/// settings each technique resolved for this trial (its `auto`s decided: amp's loss_scale is
/// "dynamic", "none" or a number; fused_optimizer's kernel is "fused" or "foreach"), so that a
/// technique reads another's decision instead of re-deriving its rule. In resolve() they are the
/// parameters as configured. The runner records the resolved settings in the trial's environment
/// ("technique.NAME").
class TrialPlan {
 public:
  TrialPlan(const nlohmann::json& config, c10::Device device, nlohmann::json techniques)
      : config_(&config), device_(device), techniques_(std::move(techniques)) {}
  const nlohmann::json& config() const { return *config_; }  ///< the fully resolved experiment
  c10::Device device() const { return device_; }
  Task task() const { return IsInference(*config_) ? Task::kInfer : Task::kTrain; }
  /// The settings of technique `name`, or nullptr when the trial does not run it.
  const nlohmann::json* technique(std::string_view name) const {
    const auto it = techniques_.find(std::string(name));
    return it == techniques_.end() ? nullptr : &*it;
  }
  /// Every technique the trial runs: name -> settings.
  const nlohmann::json& techniques() const { return techniques_; }

 private:
  const nlohmann::json* config_;
  c10::Device device_;
  nlohmann::json techniques_;
};

/// What a technique can see of and do to the running trial. Implemented by the runner.
class TrialContext {
 public:
  virtual ~TrialContext() = default;
  virtual const nlohmann::json& config() const = 0;  ///< the fully resolved experiment config
  virtual c10::Device device() const = 0;
  virtual torch::nn::Module& model() = 0;
  /// The training optimizer; throws std::logic_error for `task: infer`, which has none.
  virtual torch::optim::Optimizer& optimizer() = 0;
  virtual bool has_technique(std::string_view name) const = 0;
  /// Records a metric in the results store (`step` < 0: a trial-level metric).
  virtual void metric(std::string_view name, double value, std::string_view unit = "", int64_t step = -1) = 0;
  /// A line in the trial's log (shown with --verbose, kept in the store's environment).
  virtual void note(std::string_view text) = 0;
  /// A string fact about the trial kept in its environment (e.g. "export.path" -> the file).
  virtual void record(std::string_view key, std::string_view value) = 0;
  /// The model's forward pass (logits) on `input`, e.g. for checks or export examples.
  virtual torch::Tensor forward(const torch::Tensor& input) = 0;
  /// Shape of one sample (without the batch dimension) and the current training batch size.
  virtual std::vector<int64_t> sample_shape() const = 0;
  virtual int64_t batch_size() const = 0;
  /// Sets the training batch size. Only from on_train_begin (before the first batch is drawn).
  virtual void set_batch_size(int64_t n) = 0;
  /// Runs `steps` timed steps (the full wrapped step, after one untimed step; infer: forward passes) on random
  /// data of `batch_size` samples on the trial's device. Out of memory is caught and reported
  /// (fits = false) and the device cache released. The model's weights and the optimizer's state
  /// are restored afterwards, so probing does not train. Only from on_train_begin.
  virtual ProbeResult probe_batch(int64_t batch_size, int steps) = 0;
  /// Ends the trial after the current hook with `status` (kNan, kFailed, ...; not kOk) and `why`.
  /// The steps run so far are kept. A technique that meets an exception it can explain may call
  /// abort and then throw (or rethrow): the trial ends at once with that status and reason, the
  /// exception's text kept beside them as the detail.
  virtual void abort(TrialStatus status, std::string_view why) = 0;
  /// A directory for the trial's files (exported models), created on first call.
  virtual std::string artifact_dir() = 0;
  /// Host memory as runx counts it (CPU tensors): an allocation that would take the bytes in use
  /// beyond the limit fails as out of memory instead of waking the kernel's OOM killer, which is
  /// what makes probing on the CPU safe. 0 = no limit.
  virtual int64_t host_memory_limit() const = 0;
  virtual void set_host_memory_limit(int64_t bytes) = 0;
  /// The trial's ranks when it runs data-parallel (the data_parallel technique: one process per
  /// rank, each with its own shard of every global batch), else null. Every rank runs every hook.
  virtual Collectives* collectives() { return nullptr; }
};

/// The verdict of Technique::check on a trial's configuration.
struct CheckResult {
  bool ok = true;
  std::string reason;  ///< why not, when !ok: "fp16 autocast on the CPU needs LibTorch >= 2.4"
  static CheckResult Ok() { return {}; }
  static CheckResult Incompatible(std::string why) { return {false, std::move(why)}; }
};

/// Per-step figures handed to on_step_end. `loss` is the device tensor: reading it synchronizes.
struct StepStats {
  int64_t step = 0;
  bool warmup = false;
  torch::Tensor loss;
};

/// A technique. Every hook has a do-nothing default; override what you need. A trial calls them in
/// this order: configure, resolve (every technique's before the first check), check, on_setup,
/// (data opened, model built) on_model, (optimizer made) wrap_step, on_train_begin, make_loader
/// (host data only), then per step on_batch, the step, on_step_end, on_epoch_end, and finally
/// on_finish. Hooks run in the alphabetical order of the techniques' names (the order they are
/// written in is not part of a trial's identity, so it must not change what runs), except wrap_step, which runs in
/// ascending wrap_order() (the lowest is innermost: fused_optimizer = 50, anomaly = 90, amp = 100,
/// compiled_step = 150 (replaces forward and backward), default 500, cuda_graphs = 900 wraps
/// outside everything) and make_loader, where the first technique to return a loader wins.
class Technique {
 public:
  virtual ~Technique() = default;
  /// Reads parameters (already validated by the technique's schema). Throw std::invalid_argument
  /// for combinations the schema cannot express.
  virtual void configure(const nlohmann::json& params) { (void)params; }
  /// The settings this technique will apply on `plan`'s trial, with its `auto`s decided
  /// (`params` as configured; `plan` holds every technique's configured parameters). Other
  /// techniques' check() read the result through TrialPlan::technique. Called after configure
  /// and before any check; must not fail for a configuration check() would refuse (check says
  /// why). Default: `params` as they are.
  virtual nlohmann::json resolve(const nlohmann::json& params, const TrialPlan& plan) {
    (void)plan;
    return params;
  }
  /// Devices, dtypes, models or other techniques it cannot serve: `plan` is the trial as it
  /// would run, every technique's settings resolved.
  virtual CheckResult check(const TrialPlan& plan) {
    (void)plan;
    return CheckResult::Ok();
  }
  virtual void on_setup(TrialContext& trial) { (void)trial; }
  virtual void on_model(torch::nn::Module& model, TrialContext& trial) {
    (void)model;
    (void)trial;
  }
  /// After the step is wrapped and before the first batch: the place to probe batch sizes. Called
  /// for `task: infer` too (before the first measured forward pass).
  virtual void on_train_begin(TrialContext& trial) { (void)trial; }
  /// For host-resident data: return a loader to replace the runner's (prefetch does), or null.
  virtual std::unique_ptr<Loader> make_loader(const HostBatches& batches, TrialContext& trial) {
    (void)batches;
    (void)trial;
    return nullptr;
  }
  virtual void on_batch(Batch& batch, TrialContext& trial) {
    (void)batch;
    (void)trial;
  }
  virtual Step wrap_step(Step step, TrialContext& trial) {
    (void)trial;
    return step;
  }
  virtual int wrap_order() const { return 500; }
  virtual void on_step_end(const StepStats& stats, TrialContext& trial) {
    (void)stats;
    (void)trial;
  }
  virtual void on_epoch_end(TrialContext& trial) { (void)trial; }
  virtual void on_finish(TrialContext& trial) { (void)trial; }
};

/// What a plugin library exports (see RUNX_PLUGIN). Plain data, api_version first.
struct PluginDescriptor {
  int api_version;          ///< kPluginApiVersion of the plugin's build; MUST stay first
  int torch_version;        ///< compat::kTorchVersion of the plugin's build
  const char* name;         ///< must equal the library's file stem (libNAME.so -> NAME)
  const char* version;      ///< the plugin's own version, e.g. "1.0.0"
  const char* description;  ///< one line for `runx plugins`
  std::unique_ptr<Technique> (*create)();
};

/// The exported entry: a function returning the descriptor, named by this alias.
using PluginEntry = const PluginDescriptor*();
inline constexpr const char* kPluginEntryName = "runx_plugin";

}  // namespace runx

/// Defines and exports the entry of a plugin library. Use once per plugin, at namespace scope:
///   RUNX_PLUGIN(amp, "1.0.0", "mixed precision (autocast) with dynamic loss scaling", AmpTechnique)
/// Requires <boost/dll/alias.hpp>, which runx/plugin_export.h includes.
#define RUNX_PLUGIN(NAME, VERSION, DESCRIPTION, TYPE)                                                      \
  namespace runx_plugin_##NAME {                                                                           \
    static std::unique_ptr<::runx::Technique> Create() { return std::make_unique<TYPE>(); }                \
    static const ::runx::PluginDescriptor* Describe() {                                                    \
      static const ::runx::PluginDescriptor d{                                                             \
          ::runx::kPluginApiVersion, ::runx::compat::kTorchVersion, #NAME, VERSION, DESCRIPTION, &Create}; \
      return &d;                                                                                           \
    }                                                                                                      \
  }                                                                                                        \
  BOOST_DLL_ALIAS(runx_plugin_##NAME::Describe, runx_plugin)
