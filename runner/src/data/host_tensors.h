#pragma once
// A host-resident data set held as whole tensors ([N, ...] inputs and [N, ...] targets) in memory or
// mapped from files: the training batches of memmap and text data and of `placement: host`
// Fashion-MNIST.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <torch/types.h>

#include "data/data.h"

namespace runx::data {

/// How inputs become model input on the device: float, times `scale`, minus `mean`, over `std`
/// (one value, or one per channel: the first dimension of a sample).
struct Normalization {
  double scale = 1.0;
  std::vector<double> mean{0.0};
  std::vector<double> std{1.0};
};

struct HostTensorsOptions {
  std::string name;              ///< the source, for messages: "memmap", "fashion-mnist", "text"
  torch::Tensor inputs, labels;  ///< [N, ...] in their stored dtype; [N] or [N, ...] integers
  /// What Prepare makes of the inputs on the device: float, then scaled and normalized; or an
  /// integer type (token ids), values unchanged and no normalization.
  c10::ScalarType input_dtype = c10::kFloat;
  torch::Tensor eval_inputs, eval_labels;  ///< undefined: no held-out split
  int64_t num_classes = 0;
  int64_t batch_size = 1;
  bool shuffle = true;
  uint64_t seed = 0;
  Normalization normalization;
  c10::Device device = c10::Device(c10::DeviceType::CPU);
};

/// Batch i (counting across epochs) holds the rows order(epoch)[pos*B, (pos+1)*B) with epoch =
/// i / batches_per_epoch() and pos = i % batches_per_epoch(). Unshuffled, a batch is a view of the
/// inputs (zero-copy: over a mapping, the file's own pages); shuffled, a gather of its rows, the
/// permutation of each epoch drawn from its own generator seeded by (seed, epoch).
class HostTensors : public DataSource {
 public:
  explicit HostTensors(HostTensorsOptions options);
  std::vector<int64_t> sample_shape() const override;
  int64_t num_classes() const override { return o_.num_classes; }
  SampleSpec sample_spec() const override;
  int64_t batch_size() const override { return o_.batch_size; }
  int64_t batches_per_epoch() const override { return o_.inputs.size(0) / o_.batch_size; }
  void set_batch_size(int64_t n) override;
  bool on_host() const override { return true; }
  Batch Get(int64_t index) const override;
  Batch Prepare(Batch on_device) const override;
  std::optional<Batch> EvalSet() const override;

  /// The order of the rows in epoch `epoch`: a permutation of [0, N), or arange when unshuffled.
  torch::Tensor EpochOrder(int64_t epoch) const;

 private:
  HostTensorsOptions o_;
  torch::Tensor mean_, std_;  ///< per-channel, shaped to broadcast over a batch; undefined: scalars
  mutable std::mutex mu_;
  mutable int64_t cached_epoch_ = -1;
  mutable torch::Tensor cached_order_;
  mutable std::optional<Batch> eval_;
};

/// A seed for epoch `epoch` of a run seeded `seed` (splitmix64 of both).
uint64_t EpochSeed(uint64_t seed, int64_t epoch);

}  // namespace runx::data
