#pragma once
// Data sources: synthetic (on-device random tensors) and fashion-mnist (the IDX files Debian's
// dataset-fashion-mnist installs). Batches come out on the trial's device, fixed-size (drop_last).
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "runx/plugin.h"

namespace runx::data {

/// A data source cannot be opened or read (missing file, bad format); the message says how to fix it.
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual std::vector<int64_t> sample_shape() const = 0;
  virtual int64_t num_classes() const = 0;
  virtual int64_t batch_size() const = 0;
  /// Full batches in one pass over the training split (the last partial batch is dropped).
  virtual int64_t batches_per_epoch() const = 0;
  /// The next training batch; after batches_per_epoch() calls a new (reshuffled) epoch begins.
  virtual Batch Next() = 0;
  /// Held-out split for accuracy (inputs, labels) on the device; nullopt for synthetic data.
  virtual std::optional<Batch> EvalSet() const = 0;
};

std::unique_ptr<DataSource> MakeDataSource(const nlohmann::json& data, const c10::Device& device,
                                           uint64_t seed);

/// Reads a (gzipped or plain) IDX file into a uint8 tensor shaped as its header says.
torch::Tensor ReadIdx(const std::string& path);

}  // namespace runx::data
