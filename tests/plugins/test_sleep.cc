// Sleeps a fixed time inside every training step (around the forward pass, so within the timed
// step), making a variant slower by a known amount: the known effect `runx report` is tested on.
// RUNX_TEST_SLEEP_EXTRA_MS, read in the trial's process, adds to `ms` without changing the
// trial's configuration: the same configuration slower in a later run (a regression).
#include <chrono>
#include <cstdlib>
#include <thread>

#include "runx/plugin_export.h"

namespace {
class Sleep : public runx::Technique {
 public:
  void configure(const nlohmann::json& p) override {
    ms_ = p.value("ms", 5.0);
    if (const char* extra = std::getenv("RUNX_TEST_SLEEP_EXTRA_MS")) ms_ += std::atof(extra);
  }
  runx::Step wrap_step(runx::Step step, runx::TrialContext&) override {
    const auto pause = std::chrono::duration<double, std::milli>(ms_);
    step.forward = [forward = step.forward, pause](runx::Batch& batch) {
      std::this_thread::sleep_for(pause);
      return forward(batch);
    };
    return step;
  }

 private:
  double ms_ = 5.0;
};
}  // namespace

RUNX_PLUGIN(test_sleep, "0.1.0", "test plugin: sleeps a fixed time in every step", Sleep)
