#pragma once
// What the tests of a trial's phases share: a tiny CPU config, the real plugins, the runner's
// state for one trial, and a technique that logs the hooks it sees.
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "data/data.h"
#include "plugins/loader.h"
#include "runx/plugin.h"
#include "spec/trial_config.h"
#include "store/store.h"
#include "trial/context.h"

namespace runx::testing {

/// A trial on the CPU: a small CNN on synthetic 3x8x8 images of 5 classes, batches of 4, 2 warm-up
/// and 6 measured SGD steps; `extra` is merged in (JSON merge patch).
nlohmann::json TinyConfig(nlohmann::json extra = nlohmann::json::object());

/// The build's real plugins and the test plugins (test_good, test_throws, ...).
const plugins::Registry& TestPlugins();

/// The trial-level metric `name` of `r`, NaN if absent.
double MetricOf(const store::TrialRecord& r, const std::string& name);

/// The runner's state for one trial, as RunTrial holds it, for driving one phase.
struct TrialHarness {
  explicit TrialHarness(nlohmann::json c = TinyConfig());
  TrialHarness(const TrialHarness&) = delete;
  TrialHarness& operator=(const TrialHarness&) = delete;

  nlohmann::json config;
  spec::TrialConfig trial;  ///< the typed view of `config`, as RunTrial makes it
  store::TrialRecord rec;
  std::vector<std::string> notes;
  std::vector<engine::ActiveTechnique> active;
  engine::RunnerContext ctx;  ///< refers to the members above
};

/// A technique written in the test: appends "name:hook" to `log` for every hook it sees, and
/// wraps the step so that wrapping order shows in the log.
class LoggingTechnique : public Technique {
 public:
  LoggingTechnique(std::string name, std::vector<std::string>& log, int order = 500)
      : name_(std::move(name)), log_(log), order_(order) {}
  void on_setup(TrialContext&) override { Log("on_setup"); }
  void on_model(torch::nn::Module&, TrialContext&) override { Log("on_model"); }
  void on_train_begin(TrialContext&) override { Log("on_train_begin"); }
  void on_batch(Batch&, TrialContext&) override { Log("on_batch"); }
  Step wrap_step(Step step, TrialContext&) override;
  int wrap_order() const override { return order_; }
  void on_step_end(const StepStats& s, TrialContext& trial) override;
  void on_epoch_end(TrialContext&) override { Log("on_epoch_end"); }
  void on_finish(TrialContext&) override { Log("on_finish"); }

  int64_t abort_at = -1;  ///< aborts the trial in on_step_end of this step

 private:
  void Log(const std::string& hook) { log_.push_back(name_ + ":" + hook); }
  std::string name_;
  std::vector<std::string>& log_;
  int order_;
};

/// Adds `t` to the harness's techniques under `name`.
void AddTechnique(TrialHarness& h, const std::string& name, std::unique_ptr<Technique> t);

/// How many entries of `log` equal `entry`.
int Count(const std::vector<std::string>& log, const std::string& entry);

/// Device data of fixed batches, with an optional held-out split: for the phases that only need
/// a DataSource.
class FixedData : public data::DataSource {
 public:
  FixedData(std::vector<int64_t> shape, int64_t classes, int64_t batch, int64_t per_epoch)
      : shape_(std::move(shape)), classes_(classes), batch_(batch), per_epoch_(per_epoch) {}
  std::vector<int64_t> sample_shape() const override { return shape_; }
  int64_t num_classes() const override { return classes_; }
  int64_t batch_size() const override { return batch_; }
  int64_t batches_per_epoch() const override { return per_epoch_; }
  void set_batch_size(int64_t n) override { batch_ = n; }
  Batch Next() override;
  std::optional<Batch> EvalSet() const override { return eval; }

  std::optional<Batch> eval;

 private:
  std::vector<int64_t> shape_;
  int64_t classes_, batch_, per_epoch_;
};

}  // namespace runx::testing
