#pragma once
// The environment half of a trial's identity (the config half is spec/identity.h) and the
// identity of this runx build. Whether a runner is alive: sweep/runners.h.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "plugins/loader.h"

namespace runx::engine {

/// This runx build: sha256 over the content of runx (the one beside this worker), of this worker
/// executable and of every plugin library of `registry`, so that any change to runx or to a plugin is a new build (a
/// version string or a git sha would miss uncommitted changes and rebuilds with other flags). Computed once.
std::string BuildIdentity(const plugins::Registry& registry);

/// sha256 of the platform a trial runs on: LibTorch, CUDA and cuDNN versions and the name of
/// `device` ("cpu: <cpu model>", "cuda: NVIDIA H200", ...), on the CPU also the BLAS library.
std::string PlatformIdentity(const c10::Device& device);

/// The same from `env` (TrialEnvironment's facts).
std::string PlatformIdentity(const c10::Device& device, const std::map<std::string, std::string>& env);

/// The platform identity of a trial that ran beside `side_by_side - 1` others on the CPU's cores
/// (--devices cpu,cpu; sweep/device_slots.h TrialsSideBySide): sha256 of `platform` and how many,
/// another platform, since its timings are not those of a trial alone, so that neither reuses the
/// other's results. `platform` itself, byte for byte, for a trial alone (side_by_side 1): every
/// identity recorded before this rule stays valid.
std::string SideBySidePlatform(const std::string& platform, int side_by_side);

/// The environment identity: sha256 of the build and platform identities.
std::string EnvironmentIdentity(const std::string& build, const std::string& platform);

}  // namespace runx::engine
