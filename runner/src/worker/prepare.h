#pragma once
// `runx-worker prepare` (internal): what runx, which links no LibTorch, needs to know of a sweep's
// trials before it claims them, and only LibTorch and the plugins can tell: each trial's device,
// platform and environment identities, the files a python model or `package: auto` names, and
// whether the device and every technique accept it (a settled record when not). Plus this build's
// identity, the host environment and the plugins that failed to load. One worker process answers
// for the whole sweep (sweep/sweep.cc). Torch-free header.
#include <nlohmann/json.hpp>

namespace runx::engine {

/// `request`: {"file": the experiment as given, "compiled_dir", "devices": [--devices names],
/// "trials": [{"config": planned config, "repeat_index"}]}. Returns {"build", "environment":
/// {key: value}, "warnings": [text], "trials": [{"config": as the trial runs and is stored,
/// "inputs": InputFiles as JSON text, "device", "config_hash", "env_hash", "platform_hash",
/// "repeat_index", "decided": a record (outcome/record_json.h) or null}]}, in the request's order.
nlohmann::json PrepareTrials(const nlohmann::json& request);

}  // namespace runx::engine
