#pragma once
// Data sources: synthetic (on-device random tensors) and fashion-mnist (the IDX files Debian's
// dataset-fashion-mnist installs). Batches come out on the trial's device, fixed-size (drop_last).
// With data.placement: host, and for memmap (.npy or raw files mapped into memory, memmap.h) and
// text (token ids of a text, text.h), they are made on the host instead (Get/Prepare) and the
// runner's loader moves them to the device.
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/Device.h>
#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "data/sample_spec.h"
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
  /// What a batch holds per sample once on the device (model input and loss target). Default:
  /// float samples of sample_shape() with one int64 class below num_classes().
  virtual SampleSpec sample_spec() const { return {sample_shape(), c10::kFloat, {}, c10::kLong, num_classes()}; }
  /// Facts about the data the trial records in its environment ("data.vocab_size" -> "256").
  virtual std::vector<std::pair<std::string, std::string>> Facts() const { return {}; }
  virtual int64_t batch_size() const = 0;
  /// Full batches in one pass over the training split (the last partial batch is dropped).
  virtual int64_t batches_per_epoch() const = 0;
  /// Changes the batch size before training starts (auto_batch). Throws DataError when it cannot.
  virtual void set_batch_size(int64_t n) = 0;
  /// Where batches are made. Device sources (false) hand out ready batches through Next(); host
  /// sources (true) through Get(), and the runner's loader (or a technique's, e.g. prefetch)
  /// moves them to the device (pinned staging + non-blocking copy on CUDA).
  virtual bool on_host() const { return false; }
  /// Device sources: the next training batch; after batches_per_epoch() calls a new (reshuffled)
  /// epoch begins.
  virtual Batch Next() { throw std::logic_error("Next() on a host data source: use Get()"); }
  /// Host sources: training batch number `index`, counting across epochs (epoch = index /
  /// batches_per_epoch(), each epoch its own shuffle), as CPU tensors. Deterministic and safe to
  /// call from several threads at once.
  /// Host sources: turns a batch from Get(), once on the device, into model input (dtype,
  /// normalization). Identity by default.
  virtual Batch Prepare(Batch on_device) const { return on_device; }
  virtual Batch Get(int64_t index) const {
    (void)index;
    throw std::logic_error("Get() on a device data source: use Next()");
  }
  /// Held-out split (inputs, targets) on the device, prepared like training batches; nullopt for
  /// synthetic data.
  virtual std::optional<Batch> EvalSet() const = 0;
};

std::unique_ptr<DataSource> MakeDataSource(const nlohmann::json& data, const c10::Device& device, uint64_t seed);

/// The sources MakeDataSource makes, in the order of spec/catalogue.h's DataCatalogue (which
/// declares their keys; a unit test holds the two lists equal).
std::vector<std::string> DataSourceNames();

/// Reads a (gzipped or plain) IDX file into a uint8 tensor shaped as its header says.
torch::Tensor ReadIdx(const std::string& path);

}  // namespace runx::data
