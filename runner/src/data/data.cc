#include "data/data.h"

#include <filesystem>

#include <fmt/format.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

namespace runx::data {
namespace {

/// One fixed random batch generated on the device and served every step: measures the model,
/// not the input pipeline (like the peer benchmark's static tensors).
/// data.batch_size: a number, or "auto" (auto_batch sets it before training; 1 until then).
int64_t BatchSize(const nlohmann::json& d) {
  const auto& b = d.at("batch_size");
  return b.is_string() ? 1 : b.get<int64_t>();
}

class Synthetic : public DataSource {
 public:
  Synthetic(const nlohmann::json& d, const c10::Device& device, uint64_t seed)
      : shape_(d.at("shape").get<std::vector<int64_t>>()),
        classes_(d.at("num_classes").get<int64_t>()),
        batch_(BatchSize(d)),
        device_(device),
        seed_(seed) {
    Generate();
  }
  void set_batch_size(int64_t n) override {
    batch_ = n;
    Generate();
  }
  std::vector<int64_t> sample_shape() const override { return shape_; }
  int64_t num_classes() const override { return classes_; }
  int64_t batch_size() const override { return batch_; }
  int64_t batches_per_epoch() const override { return 100; }
  Batch Next() override { return batch_data_; }
  std::optional<Batch> EvalSet() const override { return std::nullopt; }

 private:
  void Generate() {
    torch::manual_seed(seed_);
    std::vector<int64_t> full{batch_};
    full.insert(full.end(), shape_.begin(), shape_.end());
    batch_data_.input = torch::randn(full, torch::TensorOptions().device(device_));
    batch_data_.target = torch::randint(classes_, {batch_}, torch::TensorOptions().device(device_).dtype(torch::kLong));
  }
  std::vector<int64_t> shape_;
  int64_t classes_, batch_;
  c10::Device device_;
  uint64_t seed_;
  Batch batch_data_;
};

/// Fashion-MNIST: 60k/10k 28x28 grey images, 10 classes. The uint8 images live on the device;
/// each batch is gathered, converted to float and normalised there.
class FashionMnist : public DataSource {
 public:
  FashionMnist(const nlohmann::json& d, const c10::Device& device, uint64_t seed)
      : batch_(BatchSize(d)), shuffle_(d.value("shuffle", true)), device_(device) {
    const std::string dir = d.value("path", std::string("/usr/share/datasets/fashion-mnist"));
    const auto file = [&](const char* stem) {
      for (const char* ext : {".gz", ""}) {
        auto p = std::filesystem::path(dir) / (std::string(stem) + ext);
        if (std::filesystem::exists(p)) return p.string();
      }
      throw DataError(fmt::format("fashion-mnist: '{}' not found in '{}'; install it with "
                                  "'apt-get install dataset-fashion-mnist' or set data.path",
                                  stem, dir));
    };
    auto train_x = ReadIdx(file("train-images-idx3-ubyte"));
    auto train_y = ReadIdx(file("train-labels-idx1-ubyte"));
    auto test_x = ReadIdx(file("t10k-images-idx3-ubyte"));
    auto test_y = ReadIdx(file("t10k-labels-idx1-ubyte"));
    if (train_x.size(0) != train_y.size(0) || test_x.size(0) != test_y.size(0))
      throw DataError("fashion-mnist: image and label counts differ");
    if (d.contains("train_limit")) {
      const int64_t n = std::min(train_x.size(0), d.at("train_limit").get<int64_t>());
      train_x = train_x.narrow(0, 0, n);
      train_y = train_y.narrow(0, 0, n);
    }
    if (batch_ > train_x.size(0))
      throw DataError(fmt::format("data.batch_size {} is larger than the training split ({} samples)",
                                  batch_, train_x.size(0)));
    train_x_ = train_x.unsqueeze(1).to(device);  // [N, 1, 28, 28] uint8
    train_y_ = train_y.to(torch::kLong).to(device);
    eval_.input = Normalize(test_x.unsqueeze(1).to(device));
    eval_.target = test_y.to(torch::kLong).to(device);
    generator_ = at::detail::createCPUGenerator(seed);
    NewEpoch();
  }
  std::vector<int64_t> sample_shape() const override { return {1, 28, 28}; }
  int64_t num_classes() const override { return 10; }
  int64_t batch_size() const override { return batch_; }
  int64_t batches_per_epoch() const override { return train_x_.size(0) / batch_; }
  void set_batch_size(int64_t n) override {
    if (n > train_x_.size(0))
      throw DataError(fmt::format("batch size {} is larger than the training split ({} samples)", n, train_x_.size(0)));
    batch_ = n;
    cursor_ = 0;
  }
  Batch Next() override {
    if (cursor_ == batches_per_epoch()) NewEpoch();
    auto idx = order_.narrow(0, cursor_++ * batch_, batch_);
    return {Normalize(train_x_.index_select(0, idx)), train_y_.index_select(0, idx)};
  }
  std::optional<Batch> EvalSet() const override { return eval_; }

 private:
  static torch::Tensor Normalize(const torch::Tensor& x) {
    return x.to(torch::kFloat).div_(255.0).sub_(0.2860).div_(0.3530);  // Fashion-MNIST mean/std
  }
  void NewEpoch() {
    const int64_t n = train_x_.size(0);
    order_ = shuffle_ ? torch::randperm(n, generator_, torch::kLong) : torch::arange(n, torch::kLong);
    order_ = order_.to(device_);
    cursor_ = 0;
  }
  int64_t batch_;
  bool shuffle_;
  c10::Device device_;
  torch::Tensor train_x_, train_y_, order_;
  Batch eval_;
  at::Generator generator_;
  int64_t cursor_ = 0;
};

}  // namespace

std::unique_ptr<DataSource> MakeDataSource(const nlohmann::json& data, const c10::Device& device, uint64_t seed) {
  const std::string source = data.at("source").get<std::string>();
  if (source == "synthetic") return std::make_unique<Synthetic>(data, device, seed);
  if (source == "fashion-mnist") return std::make_unique<FashionMnist>(data, device, seed);
  throw DataError("unknown data source '" + source + "'");
}

}  // namespace runx::data
