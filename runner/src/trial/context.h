#pragma once
// The runner's side of a trial: the techniques it runs and the TrialContext they see.
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "data/data.h"
#include "models/models.h"
#include "outcome/failure.h"
#include "runx/plugin.h"
#include "spec/trial_config.h"
#include "store/store.h"

namespace runx::engine {

/// A failure of a technique hook; the message names the technique and the hook.
struct TechniqueFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Thrown by the runner when a technique called TrialContext::abort before training began.
struct TrialAborted {};

/// A technique the trial runs, under the name it was listed with.
struct ActiveTechnique {
  std::string name;
  std::unique_ptr<Technique> technique;
};

/// Calls `fn` on every technique in order. An exception becomes a TechniqueFailure naming the
/// technique and `hook`, except std::bad_alloc: out of memory is the trial's status, whoever
/// asked for the memory.
template <typename Fn>
void ForEachTechnique(std::vector<ActiveTechnique>& active, const char* hook, Fn&& fn) {
  for (auto& a : active) {
    try {
      fn(*a.technique);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      throw TechniqueFailure(fmt::format("technique '{}' failed in {}: {}", a.name, hook, e.what()));
    }
  }
}

/// What the techniques of one trial see. It writes metrics and environment into the trial's
/// record; the phases fill in the model, optimizer, data and step as they are made.
class RunnerContext : public TrialContext {
 public:
  /// `trial` is the typed view of `config` (spec::TrialConfig::From), made once by the caller.
  RunnerContext(const nlohmann::json& config, const spec::TrialConfig& trial, c10::Device device,
                store::TrialRecord& rec, std::vector<std::string>& notes, std::vector<ActiveTechnique>& active)
      : config_(config), trial_(trial), device_(device), rec_(rec), notes_(notes), active_(active) {}
  const nlohmann::json& config() const override { return config_; }
  /// The keys every trial reads, typed (the runner's own view; techniques see config()).
  const spec::TrialConfig& trial() const { return trial_; }
  c10::Device device() const override { return device_; }
  torch::nn::Module& model() override { return *model_; }
  torch::optim::Optimizer& optimizer() override;
  bool has_technique(std::string_view name) const override;
  void metric(std::string_view name, double value, std::string_view unit = "", int64_t step = -1) override;
  void note(std::string_view text) override { notes_.emplace_back(text); }
  void record(std::string_view key, std::string_view value) override {
    rec_.environment[std::string(key)] = std::string(value);
  }
  torch::Tensor forward(const torch::Tensor& input) override { return model_->forward(input); }
  std::vector<int64_t> sample_shape() const override { return data_->sample_shape(); }
  int64_t batch_size() const override { return data_->batch_size(); }
  void set_batch_size(int64_t n) override;
  /// Defined in trial/probe.cc.
  ProbeResult probe_batch(int64_t n, int steps) override;
  void abort(TrialStatus status, std::string_view why) override;
  std::string artifact_dir() override;
  int64_t host_memory_limit() const override;
  void set_host_memory_limit(int64_t bytes) override;
  Collectives* collectives() override { return collectives_.get(); }

  /// After on_train_begin: no more probes, so the weights they restored from are freed.
  void EndTrainBegin();

  bool aborted() const { return abort_status_.has_value(); }
  const std::optional<TrialStatus>& abort_status() const { return abort_status_; }
  const std::string& abort_why() const { return abort_why_; }

  std::shared_ptr<models::Model> model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  data::DataSource* data_ = nullptr;
  Step* step_ = nullptr;
  bool in_train_begin_ = false;
  std::unique_ptr<Collectives> collectives_;  ///< a data-parallel trial's process group

 private:
  const nlohmann::json& config_;
  const spec::TrialConfig& trial_;
  c10::Device device_;
  store::TrialRecord& rec_;
  std::vector<std::string>& notes_;
  std::vector<ActiveTechnique>& active_;
  std::optional<TrialStatus> abort_status_;
  std::string abort_why_, artifact_dir_;
  std::vector<torch::Tensor> snapshot_;  ///< weights and buffers before the first probe
};

}  // namespace runx::engine
