#pragma once
// What a result depends on besides the config: versions, device, host.
#include <map>
#include <string>

#include <c10/core/Device.h>

namespace runx::engine {

/// Host-level facts (runx version and git sha, LibTorch, CUDA and cuDNN versions, OS, CPU, threads).
std::map<std::string, std::string> HostEnvironment();

/// HostEnvironment plus the device a trial ran on (device, device_name).
std::map<std::string, std::string> TrialEnvironment(const c10::Device& device);

/// UTC now as ISO-8601 ("2026-12-02T13:08:01Z").
std::string UtcNow();

}  // namespace runx::engine
