// Fashion-MNIST: 60k/10k 28x28 grey images, 10 classes, from the IDX files Debian's
// dataset-fashion-mnist installs.
#include <filesystem>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include "data/host_tensors.h"
#include "data/sources.h"

namespace runx::data {
namespace {

torch::Tensor Normalize(const torch::Tensor& x) {
  return x.to(torch::kFloat).div_(255.0).sub_(kFashionMnistMean).div_(kFashionMnistStd);
}

/// `placement: device`: the uint8 images live on the device; each batch is gathered, converted to
/// float and normalised there.
class FashionMnist : public DataSource {
 public:
  FashionMnist(const nlohmann::json& d, const spec::DataConfig& common, const c10::Device& device, uint64_t seed)
      : batch_(common.batch_size), shuffle_(common.shuffle), device_(device) {
    auto a = LoadFashionMnist(d);
    if (batch_ > a.train_x.size(0))
      throw DataError(
          fmt::format("data.batch_size {} is larger than the training split ({} samples)", batch_, a.train_x.size(0)));
    train_x_ = a.train_x.to(device);  // [N, 1, 28, 28] uint8
    train_y_ = a.train_y.to(device);
    eval_.input = Normalize(a.test_x.to(device));
    eval_.target = a.test_y.to(device);
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

FashionMnistArrays LoadFashionMnist(const nlohmann::json& d) {
  const std::string dir = d.value("path", std::string("/usr/share/datasets/fashion-mnist"));
  const auto file = [&](const char* stem) {
    for (const char* ext : {".gz", ""}) {
      auto p = std::filesystem::path(dir) / (std::string(stem) + ext);
      if (std::filesystem::exists(p)) return p.string();
    }
    throw DataError(
        fmt::format("fashion-mnist: '{}' not found in '{}'; install it with "
                    "'apt-get install dataset-fashion-mnist' or set data.path",
                    stem, dir));
  };
  FashionMnistArrays a;
  a.train_x = ReadIdx(file("train-images-idx3-ubyte"));
  a.train_y = ReadIdx(file("train-labels-idx1-ubyte"));
  a.test_x = ReadIdx(file("t10k-images-idx3-ubyte"));
  a.test_y = ReadIdx(file("t10k-labels-idx1-ubyte"));
  if (a.train_x.size(0) != a.train_y.size(0) || a.test_x.size(0) != a.test_y.size(0))
    throw DataError("fashion-mnist: image and label counts differ");
  if (a.train_x.dim() != 3 || a.test_x.dim() != 3 || a.train_y.dim() != 1 || a.test_y.dim() != 1)
    throw DataError(fmt::format("fashion-mnist: the IDX files in '{}' are not images [N, H, W] and labels [N]", dir));
  if (d.contains("train_limit")) {
    const int64_t n = std::min(a.train_x.size(0), d.at("train_limit").get<int64_t>());
    a.train_x = a.train_x.narrow(0, 0, n);
    a.train_y = a.train_y.narrow(0, 0, n);
  }
  a.train_x = a.train_x.unsqueeze(1).contiguous();
  a.test_x = a.test_x.unsqueeze(1).contiguous();
  a.train_y = a.train_y.to(torch::kLong);
  a.test_y = a.test_y.to(torch::kLong);
  return a;
}

std::unique_ptr<DataSource> MakeFashionMnist(const nlohmann::json& d, const c10::Device& device, uint64_t seed) {
  const spec::DataConfig common = spec::DataConfig::From(d);
  if (!common.host_placement) return std::make_unique<FashionMnist>(d, common, device, seed);
  // `placement: host`: uint8 images in host memory, batches converted on the device.
  auto a = LoadFashionMnist(d);
  HostTensorsOptions o;
  o.name = "fashion-mnist";
  o.inputs = a.train_x;
  o.labels = a.train_y;
  o.eval_inputs = a.test_x;
  o.eval_labels = a.test_y;
  o.num_classes = 10;
  o.batch_size = common.batch_size;
  o.shuffle = common.shuffle;
  o.seed = seed;
  o.normalization = {1.0 / 255.0, {kFashionMnistMean}, {kFashionMnistStd}};
  o.device = device;
  return std::make_unique<HostTensors>(std::move(o));
}

}  // namespace runx::data
