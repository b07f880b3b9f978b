#pragma once
// A TrialContext for driving one technique in isolation.
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
  /// The last value recorded for `name`, NaN if none.
  double Last(const std::string& name) const;

  std::vector<RecordedMetric> metrics;
  std::vector<std::string> notes;

 private:
  nlohmann::json config_;
  std::shared_ptr<torch::nn::Module> model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
};

/// Loads the real plugin `name` from the build's plugin directory and configures it.
std::unique_ptr<Technique> LoadTechnique(const std::string& name, const nlohmann::json& params = nlohmann::json::object());

}  // namespace runx::testing
