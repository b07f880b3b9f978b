#pragma once
// The keys every trial reads, typed, with their defaults stated once: made once from a trial's
// resolved config (TrialConfig::From) and read by the trial's phases instead of the JSON. The
// keys of one model or data source stay in their JSON section, handed to that model or source
// (spec/catalogue.h says which keys each reads); so do the techniques' parameters, which are
// their plugins'. What identifies a trial is computed from the JSON (spec/identity.h), never from
// this view. No LibTorch here.
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace runx::spec {

/// A key of a trial's config that the view cannot read (wrong type, unknown value, missing where
/// required); the message names the key: "'train.steps' is \"ten\"; expected an integer".
struct TrialConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// `precision`.
enum class Precision { kFp32, kTf32, kFp16, kBf16 };
/// "fp32", "tf32", "fp16", "bf16".
const char* Name(Precision precision);

/// `train.optimizer`. The defaults depend on the name: sgd lr 0.1, momentum 0.9, weight decay 0;
/// adamw lr 1e-3, weight decay 1e-2.
struct OptimizerConfig {
  std::string name = "sgd";  ///< "adamw", else sgd
  double lr = 0.1;
  double momentum = 0.9;  ///< sgd
  bool nesterov = false;  ///< sgd
  double weight_decay = 0.0;
  std::optional<std::array<double, 2>> betas;  ///< adamw; unset: LibTorch's
  std::optional<double> eps;                   ///< adamw; unset: LibTorch's
  bool adamw() const { return name == "adamw"; }
};

/// The steps a trial runs: `train`'s, or `infer`'s for `task: infer`.
struct StepsConfig {
  int64_t warmup_steps = 5;      ///< 5 for training, 10 for inference
  int64_t steps = 50;            ///< measured steps: 50 for training, 100 for inference
  std::optional<double> epochs;  ///< train.epochs (training only): steps from batches per epoch instead
  bool eval = true;              ///< accuracy on the held-out split afterwards
};

/// The keys of `data` that the runner and every source read alike (DataConfig::From). The
/// section itself goes to the source, which reads its own keys from it.
struct DataConfig {
  std::string source;
  /// data.batch_size: samples per step; 1 while it is "auto" (auto_batch sets it before training).
  int64_t batch_size = 1;
  bool batch_auto = false;  ///< data.batch_size: auto
  bool shuffle = true;
  /// data.placement: host (the sources that have the key, synthetic and fashion-mnist: batches
  /// made in host memory); false for device, the default.
  bool host_placement = false;

  /// Reads the common keys of a `data` section; throws TrialConfigError naming `data.<key>`.
  static DataConfig From(const nlohmann::json& data);
};

/// The data_parallel technique's settings that the runner reads itself (the rest is its plugin's).
struct DataParallelConfig {
  int world_size = 1;  ///< rank processes
};

/// What a trial reads of its resolved config, typed.
struct TrialConfig {
  std::string name = "experiment";
  std::string device = "auto";  ///< as written: auto, cpu, mps, cuda, cuda:N
  Precision precision = Precision::kFp32;
  uint64_t seed = 0;           ///< the experiment's `seed`
  std::optional<int> threads;  ///< `threads`; unset: the process's default
  bool infer = false;          ///< task: infer (else train)
  StepsConfig steps;           ///< `train`, or `infer` for task: infer, with that task's defaults
  OptimizerConfig optimizer;   ///< train.optimizer
  DataConfig data;
  /// The techniques the trial runs, name -> parameters (ResolvedTechniques: amp and auto_batch
  /// made explicit).
  nlohmann::json techniques = nlohmann::json::object();
  std::optional<uint64_t> determinism_seed;                 ///< optimizations.determinism.seed
  std::optional<DataParallelConfig> data_parallel;          ///< set when the trial runs data_parallel
  nlohmann::json model_section = nlohmann::json::object();  ///< `model`, for the model (catalogue keys)
  nlohmann::json data_section = nlohmann::json::object();   ///< `data`, for the data source (catalogue keys)

  /// The number of rank processes the trial runs as: data_parallel's world_size, 0 without it
  /// (one ordinary trial process). The parent asks this too, when it starts a trial's processes.
  int ranks() const { return data_parallel ? data_parallel->world_size : 0; }
  /// The seed of everything the runner seeds (data, initial weights): determinism's own when it
  /// sets one, else the experiment's.
  uint64_t trial_seed() const { return determinism_seed.value_or(seed); }

  /// The view of `config`, a trial's resolved config (its `model` and `data` sections required).
  /// Throws TrialConfigError naming the first key it cannot read.
  static TrialConfig From(const nlohmann::json& config);
};

}  // namespace runx::spec
