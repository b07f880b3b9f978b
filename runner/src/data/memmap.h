#pragma once
// `data.source: memmap`: training data read in place from .npy or raw binary files mapped into
// memory (see docs/techniques.md, "memmap").
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "data/host_tensors.h"
#include "data/mapped_file.h"

namespace runx::data {

/// What an array file must hold. A raw (headerless) file needs `dtype` and `sample_shape`; a .npy
/// file says both itself, and must agree with those given (`from` names where they came from).
struct ArrayLayout {
  std::optional<c10::ScalarType> dtype;
  std::optional<std::vector<int64_t>> sample_shape;  ///< {} for one value per sample (labels)
  std::string from;                                  ///< "data.dtype", "data.path's samples", ...
  bool check_npy = true;  ///< false: `dtype` is only the raw default (data.label_dtype absent)
};

/// Maps `path` and returns the tensor [N, ...] over its data (no copy): N from the .npy header, or
/// for a raw file the file size over the sample size, which must divide it exactly. The tensor's
/// storage keeps the mapping alive. `key` names the DSL key in messages ("data.labels").
torch::Tensor MapArray(const std::string& path, const std::string& key, const ArrayLayout& layout,
                       std::shared_ptr<const MappedFile>* file = nullptr);

/// The memmap data source: the DSL's data.path / labels / eval_path / eval_labels mapped, batches
/// made by HostTensors (views unshuffled, gathers shuffled), inputs in their stored dtype until
/// Prepare converts and normalizes them on the device.
class MemmapSource : public HostTensors {
 public:
  MemmapSource(const nlohmann::json& d, const c10::Device& device, uint64_t seed);
  /// The mapping of data.path (for tests and diagnostics: batches point into it).
  const MappedFile& inputs_file() const { return *inputs_file_; }

 private:
  struct Opened {
    HostTensorsOptions options;
    std::shared_ptr<const MappedFile> inputs_file;
  };
  explicit MemmapSource(Opened opened);
  static Opened Open(const nlohmann::json& d, const c10::Device& device, uint64_t seed);
  std::shared_ptr<const MappedFile> inputs_file_;
};

}  // namespace runx::data
