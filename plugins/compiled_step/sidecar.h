#pragma once
// The contract between a compiled training step (FILE.pt2, made by tools/compile_step.py) and the
// trial that runs it: FILE.pt2.json lists the package's inputs (parameters, buffers, input,
// target) and outputs (buffer updates, loss, gradients) in order, with shapes, dtypes, strides and
// runx's names, and the precision, memory format, batch and torch version it was compiled for.
// Everything here is checked before the package is loaded, so that a mismatch is refused with
// both sides named instead of surfacing as a wrong result or a crash inside the package.
#include <cstdint>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <nlohmann/json.hpp>

#include "runx/plugin.h"

namespace runx::compiled_step {

/// One input or output of the package.
struct Slot {
  std::string kind;  ///< parameter, buffer, input, target | buffer_update, loss, gradient
  std::string name;  ///< runx's name (parameters, buffers, their updates and gradients)
  std::vector<int64_t> shape, stride;
  std::string dtype;  ///< torch's name: float32, bfloat16, int64
};

struct Sidecar {
  std::string path;                                 ///< the sidecar file, for messages
  std::string torch, triton, device, model, dtype;  ///< dtype: fp32 | bf16 (the autocast compiled in)
  bool channels_last = false;
  int64_t batch = 0;
  std::vector<int64_t> shape;  ///< one sample, without the batch
  std::vector<Slot> inputs, outputs;
  nlohmann::json facts;  ///< what the trial records: model, torch, triton, device, compile times
};

/// The sidecar of `package` (package + ".json"). Throws std::invalid_argument naming the file and
/// how to make it when it is missing, unreadable or not a runx-compiled-step/1 sidecar.
Sidecar LoadSidecar(const std::string& package);

/// Why the trial of `plan` cannot run this package, or "": precision (amp's resolved dtype),
/// memory format (channels_last), batch size, task, and techniques whose work the compiled step
/// replaces (anomaly, auto_batch, data_parallel).
std::string PlanMismatch(const Sidecar& sidecar, const TrialPlan& plan);

/// Why the package cannot be fed this model and these batches, or "": every parameter and buffer
/// by name, with its shape, dtype and strides; the batch size and the sample's shape. At most
/// `limit` differences are listed, each naming both sides.
std::string ModelMismatch(const Sidecar& sidecar, const torch::nn::Module& model, int64_t batch,
                          const std::vector<int64_t>& sample_shape, size_t limit = 8);

/// Why a package compiled with torch `compiled` cannot run on LibTorch `running`, or "": the
/// release (major.minor.patch) must be the same, since AOTInductor's ABI is not stable across them.
std::string TorchMismatch(const std::string& compiled, const std::string& running);

/// Whether `t` has `stride` where it matters: a dimension of size 1 is never stepped over, so its
/// stride is free (LibTorch keeps a 1x1 convolution's [C, 1, 1, 1] as channels-last where PyTorch
/// writes [C, 1, C, C]; both are the same memory).
bool SameLayout(const torch::Tensor& t, const std::vector<int64_t>& stride);

/// `t`'s dtype as the sidecar names it (float32, bfloat16, int64, ...).
std::string DtypeName(const torch::Tensor& t);

}  // namespace runx::compiled_step
