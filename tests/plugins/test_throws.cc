// Throws from the hook named by its `hook` parameter (default on_setup).
#include <stdexcept>

#include "runx/plugin_export.h"

namespace {
class Thrower : public runx::Technique {
 public:
  void configure(const nlohmann::json& p) override {
    hook_ = p.value("hook", "on_setup");
    message_ = p.value("message", "boom");
  }
  void on_setup(runx::TrialContext&) override { Maybe("on_setup"); }
  void on_step_end(const runx::StepStats&, runx::TrialContext&) override { Maybe("on_step_end"); }

 private:
  void Maybe(const std::string& hook) {
    if (hook == hook_) throw std::runtime_error(message_);
  }
  std::string hook_, message_;
};
}  // namespace

RUNX_PLUGIN(test_throws, "0.1.0", "test plugin: throws in a hook", Thrower)
