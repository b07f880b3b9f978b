// Claims a plugin API version this runx does not speak.
#include "runx/plugin_export.h"

namespace {
std::unique_ptr<runx::Technique> Create() { return std::make_unique<runx::Technique>(); }
const runx::PluginDescriptor* Describe() {
  static const runx::PluginDescriptor d{
      runx::kPluginApiVersion + 1, runx::compat::kTorchVersion, "test_wrong_api", "0.1.0", "wrong API", &Create};
  return &d;
}
}  // namespace

BOOST_DLL_ALIAS(Describe, runx_plugin)
