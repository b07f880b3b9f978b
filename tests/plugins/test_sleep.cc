// Adds a fixed sleep to every step (on_batch), so that a store has a known effect: the trial with
// it is slower by `ms` per step. Used by the compare tests (a known regression) and the parallel
// device tests (trials that take long enough to overlap).
#include <chrono>
#include <thread>

#include "runx/plugin_export.h"

namespace {
class Sleep : public runx::Technique {
 public:
  void configure(const nlohmann::json& p) override { ms_ = p.is_object() ? p.value("ms", 10.0) : 10.0; }
  void on_batch(runx::Batch&, runx::TrialContext&) override {
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms_));
  }

 private:
  double ms_ = 10;
};
}  // namespace

RUNX_PLUGIN(test_sleep, "0.1.0", "test plugin: adds a fixed sleep to every step", Sleep)
