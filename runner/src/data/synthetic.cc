// Synthetic data: random tensors of data.shape with random labels below data.num_classes.
#include <chrono>
#include <thread>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include "data/host_tensors.h"
#include "data/sources.h"

namespace runx::data {
namespace {

constexpr int64_t kBatchesPerEpoch = 100;

/// What both placements share: the shape, the classes, the batch size and the seed, and that the
/// data is regenerated when the batch size changes.
class SyntheticBase : public DataSource {
 public:
  SyntheticBase(const nlohmann::json& d, const spec::DataConfig& common, uint64_t seed)
      : shape_(d.at("shape").get<std::vector<int64_t>>()),
        classes_(d.at("num_classes").get<int64_t>()),
        batch_(common.batch_size),
        seed_(seed) {}
  void set_batch_size(int64_t n) override {
    if (n < 1) throw DataError(fmt::format("synthetic: batch size must be positive, not {}", n));
    batch_ = n;
    Generate();
  }
  std::vector<int64_t> sample_shape() const override { return shape_; }
  int64_t num_classes() const override { return classes_; }
  int64_t batch_size() const override { return batch_; }
  int64_t batches_per_epoch() const override { return kBatchesPerEpoch; }
  std::optional<Batch> EvalSet() const override { return std::nullopt; }

 protected:
  /// Makes the random data for the current batch size.
  virtual void Generate() = 0;
  /// [batch, *shape]
  std::vector<int64_t> BatchShape() const {
    std::vector<int64_t> full{batch_};
    full.insert(full.end(), shape_.begin(), shape_.end());
    return full;
  }
  std::vector<int64_t> shape_;
  int64_t classes_, batch_;
  uint64_t seed_;
};

/// `placement: device`: one fixed random batch generated on the device and served every step:
/// measures the model, not the input pipeline (like the peer benchmark's static tensors).
class Synthetic : public SyntheticBase {
 public:
  Synthetic(const nlohmann::json& d, const spec::DataConfig& common, const c10::Device& device, uint64_t seed)
      : SyntheticBase(d, common, seed), device_(device) {
    Generate();
  }
  Batch Next() override { return batch_data_; }

 private:
  void Generate() override {
    torch::manual_seed(seed_);
    batch_data_.input = torch::randn(BatchShape(), torch::TensorOptions().device(device_));
    batch_data_.target = torch::randint(classes_, {batch_}, torch::TensorOptions().device(device_).dtype(torch::kLong));
  }
  c10::Device device_;
  Batch batch_data_;
};

/// `placement: host`: a fresh CPU batch per Get(index), the same for the same index: a copy of a
/// pool of random values drawn once (at an offset derived from the index), random labels from a
/// generator seeded by (seed, index), then `produce_ms` of sleep standing in for the decoding and
/// augmentation of a real input pipeline.
class SyntheticHost : public SyntheticBase {
 public:
  SyntheticHost(const nlohmann::json& d, const spec::DataConfig& common, uint64_t seed)
      : SyntheticBase(d, common, seed),
        produce_(std::chrono::duration<double, std::milli>(d.value("produce_ms", 0.0))) {
    Generate();
  }
  bool on_host() const override { return true; }
  Batch Get(int64_t index) const override {
    const auto start = std::chrono::steady_clock::now();
    auto gen = at::detail::createCPUGenerator(EpochSeed(seed_, index));
    auto input = torch::empty(BatchShape(), torch::kFloat);
    const int64_t n = pool_.numel();
    const int64_t offset = static_cast<int64_t>(EpochSeed(seed_ + 1, index) % static_cast<uint64_t>(n));
    const float* src = pool_.data_ptr<float>();
    float* dst = input.data_ptr<float>();
    std::copy(src + offset, src + n, dst);
    std::copy(src, src + offset, dst + (n - offset));
    auto target = torch::randint(classes_, {batch_}, gen, torch::kLong);
    if (produce_.count() > 0) std::this_thread::sleep_until(start + produce_);
    return {input, target};
  }

 private:
  void Generate() override {
    auto gen = at::detail::createCPUGenerator(seed_);
    pool_ = torch::randn(BatchShape(), gen, torch::kFloat);
  }
  std::chrono::duration<double, std::milli> produce_;
  torch::Tensor pool_;
};

}  // namespace

std::unique_ptr<DataSource> MakeSynthetic(const nlohmann::json& d, const c10::Device& device, uint64_t seed) {
  const spec::DataConfig common = spec::DataConfig::From(d);
  if (common.host_placement) return std::make_unique<SyntheticHost>(d, common, seed);
  return std::make_unique<Synthetic>(d, common, device, seed);
}

}  // namespace runx::data
