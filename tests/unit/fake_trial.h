#pragma once
// A TrialContext for driving one technique in isolation.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "runx/plugin.h"

namespace runx::testing {

struct RecordedMetric {
  std::string name;
  double value;
  int64_t step;
};

class FakeTrial : public TrialContext {
 public:
  FakeTrial(nlohmann::json config, std::shared_ptr<torch::nn::Module> model);
  const nlohmann::json& config() const override { return config_; }
  c10::Device device() const override { return torch::kCPU; }
  torch::nn::Module& model() override { return *model_; }
  torch::optim::Optimizer& optimizer() override { return *optimizer_; }
  bool has_technique(std::string_view) const override { return false; }
  void metric(std::string_view name, double value, std::string_view = "", int64_t step = -1) override {
    metrics.push_back({std::string(name), value, step});
  }
  void note(std::string_view text) override { notes.emplace_back(text); }
  void record(std::string_view key, std::string_view value) override { records[std::string(key)] = std::string(value); }
  /// Runs the model as a function of one tensor when it is a torch::nn::Sequential-like module
  /// given through `forward_fn`; throws otherwise.
  torch::Tensor forward(const torch::Tensor& input) override {
    if (!forward_fn) throw std::logic_error("FakeTrial: no forward_fn set");
    return forward_fn(input);
  }
  std::vector<int64_t> sample_shape() const override { return shape; }
  int64_t batch_size() const override { return batch; }
  void set_batch_size(int64_t n) override { batch = n; }
  /// Calls `probe_fn` (tests script the outcome), or throws.
  ProbeResult probe_batch(int64_t n, int steps) override {
    if (!probe_fn) throw std::logic_error("FakeTrial: no probe_fn set");
    return probe_fn(n, steps);
  }
  void abort(TrialStatus status, std::string_view why) override {
    abort_status = std::string(Name(status));
    abort_why = std::string(why);
  }
  std::string artifact_dir() override { return dir; }
  int64_t host_memory_limit() const override { return host_limit; }
  void set_host_memory_limit(int64_t bytes) override { host_limit = bytes; }
  /// The last value recorded for `name`, NaN if none.
  double Last(const std::string& name) const;

  std::vector<RecordedMetric> metrics;
  std::vector<std::string> notes;
  std::map<std::string, std::string> records;
  std::function<torch::Tensor(const torch::Tensor&)> forward_fn;
  std::function<ProbeResult(int64_t, int)> probe_fn;
  std::vector<int64_t> shape{4};
  int64_t batch = 8;
  int64_t host_limit = 0;
  std::string abort_status, abort_why, dir = "/tmp";

 private:
  nlohmann::json config_;
  std::shared_ptr<torch::nn::Module> model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
};

/// Loads the real plugin `name` from the build's plugin directory and configures it.
std::unique_ptr<Technique> LoadTechnique(const std::string& name,
                                         const nlohmann::json& params = nlohmann::json::object());

/// Technique `name`'s verdict on a trial of `config` run with it (configured with `params`) on
/// `device`, asked the way the runner asks: every technique of the trial created from the build's
/// plugins and resolved first (engine::PlanTechniques).
CheckResult Check(const std::string& name, const nlohmann::json& params, nlohmann::json config, c10::Device device);
/// The settings technique `name` resolves for that trial (TrialPlan::technique).
nlohmann::json Resolve(const std::string& name, const nlohmann::json& params, nlohmann::json config,
                       c10::Device device);

}  // namespace runx::testing
