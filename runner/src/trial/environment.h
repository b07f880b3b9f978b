#pragma once
// What a result depends on besides the config: versions, device, host.
#include <map>
#include <string>

#include <c10/core/Device.h>

#include "base/time.h"

namespace runx::engine {

/// Host-level facts (runx version and git sha, LibTorch, CUDA and cuDNN versions, OS, CPU, threads,
/// the BLAS library).
std::map<std::string, std::string> HostEnvironment();

/// The BLAS library this process loaded for LibTorch's CPU matrix products, as the file it
/// resolves to (Debian: /usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3, or .../blas/
/// libblas.so.3, the reference BLAS), or "none loaded" where LibTorch carries its own (MKL).
std::string BlasLibrary();

/// Whether `blas` (BlasLibrary's answer) is the unoptimized reference BLAS (Debian's libblas3).
bool IsReferenceBlas(const std::string& blas);

/// HostEnvironment plus the device a trial ran on (device, device_name).
std::map<std::string, std::string> TrialEnvironment(const c10::Device& device);

/// UTC now as ISO-8601 ("2026-12-02T13:08:01Z"): base/time.h.
using base::UtcNow;

}  // namespace runx::engine
