// A well-formed plugin that counts the hooks it sees and reports them as metrics.
#include "runx/plugin_export.h"

namespace {
class Counter : public runx::Technique {
 public:
  void on_setup(runx::TrialContext&) override { ++setup_; }
  void on_batch(runx::Batch&, runx::TrialContext&) override { ++batches_; }
  void on_step_end(const runx::StepStats&, runx::TrialContext&) override { ++steps_; }
  void on_finish(runx::TrialContext& t) override {
    t.metric("test_good_setup", setup_);
    t.metric("test_good_batches", batches_);
    t.metric("test_good_steps", steps_);
  }

 private:
  int setup_ = 0, batches_ = 0, steps_ = 0;
};
}  // namespace

RUNX_PLUGIN(test_good, "0.1.2", "test plugin: counts hooks", Counter)
