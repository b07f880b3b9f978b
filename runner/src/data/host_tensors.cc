#include "data/host_tensors.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <torch/torch.h>

namespace runx::data {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// `values` as a tensor that broadcasts over [B, C, ...] (one per channel), on `device`.
torch::Tensor PerChannel(const std::vector<double>& values, int64_t rank, const c10::Device& device) {
  std::vector<int64_t> shape{static_cast<int64_t>(values.size())};
  for (int64_t i = 1; i < rank; ++i) shape.push_back(1);
  return torch::tensor(values, torch::kDouble).to(torch::kFloat).view(shape).to(device);
}

}  // namespace

uint64_t EpochSeed(uint64_t seed, int64_t epoch) { return SplitMix64(SplitMix64(seed) ^ static_cast<uint64_t>(epoch)); }

HostTensors::HostTensors(HostTensorsOptions options) : o_(std::move(options)) {
  const int64_t n = o_.inputs.size(0);
  if (o_.labels.dim() < 1 || o_.labels.size(0) != n)
    throw DataError(
        fmt::format("{}: {} targets for {} samples", o_.name, o_.labels.dim() < 1 ? 0 : o_.labels.size(0), n));
  set_batch_size(o_.batch_size);
  const auto& norm = o_.normalization;
  const int64_t channels = o_.inputs.dim() > 1 ? o_.inputs.size(1) : 1;
  for (const auto* v : {&norm.mean, &norm.std}) {
    if (v->size() != 1 && static_cast<int64_t>(v->size()) != channels)
      throw DataError(
          fmt::format("{}: data.normalize has {} values, the samples have {} channels (their first "
                      "dimension); give one value or one per channel",
                      o_.name, v->size(), channels));
  }
  if (norm.mean.size() > 1 || norm.std.size() > 1) {
    const int64_t rank = o_.inputs.dim() - 1;
    mean_ = PerChannel(norm.mean, rank, o_.device);
    std_ = PerChannel(norm.std, rank, o_.device);
  }
}

std::vector<int64_t> HostTensors::sample_shape() const {
  const auto s = o_.inputs.sizes();
  return {s.begin() + 1, s.end()};
}

SampleSpec HostTensors::sample_spec() const {
  const auto t = o_.labels.sizes();
  return {sample_shape(), o_.input_dtype, {t.begin() + 1, t.end()}, c10::kLong, o_.num_classes};
}

void HostTensors::set_batch_size(int64_t n) {
  if (n < 1 || n > o_.inputs.size(0))
    throw DataError(
        fmt::format("{}: batch size {} does not fit the training split ({} samples)", o_.name, n, o_.inputs.size(0)));
  o_.batch_size = n;
}

torch::Tensor HostTensors::EpochOrder(int64_t epoch) const {
  const int64_t n = o_.inputs.size(0);
  if (!o_.shuffle) return torch::arange(n, torch::kLong);
  std::lock_guard<std::mutex> lock(mu_);
  if (epoch != cached_epoch_) {
    auto gen = at::detail::createCPUGenerator(EpochSeed(o_.seed, epoch));
    cached_order_ = torch::randperm(n, gen, torch::kLong);
    cached_epoch_ = epoch;
  }
  return cached_order_;
}

Batch HostTensors::Get(int64_t index) const {
  if (index < 0) throw std::out_of_range(fmt::format("{}: batch index {} is negative", o_.name, index));
  const int64_t per_epoch = batches_per_epoch(), b = o_.batch_size;
  const int64_t epoch = index / per_epoch, start = (index % per_epoch) * b;
  if (!o_.shuffle) return {o_.inputs.narrow(0, start, b), o_.labels.narrow(0, start, b)};
  const auto rows = EpochOrder(epoch).narrow(0, start, b);
  return {o_.inputs.index_select(0, rows), o_.labels.index_select(0, rows)};
}

Batch HostTensors::Prepare(Batch b) const {
  // Token ids reach the model as the integers they are (embeddings index with int64).
  if (!c10::isFloatingType(o_.input_dtype)) return {b.input.to(o_.input_dtype), b.target.to(torch::kLong)};
  // Unshuffled on the CPU, the input is the mapped (read-only) file itself: never in place there.
  torch::Tensor x = b.input;
  bool owned = x.scalar_type() != torch::kFloat;
  if (owned) x = x.to(torch::kFloat);
  const auto step = [&](auto in_place, auto out_of_place) {
    x = owned ? in_place(x) : out_of_place(x);
    owned = true;
  };
  const auto& norm = o_.normalization;
  if (norm.scale != 1.0)
    step([&](torch::Tensor& t) { return t.mul_(norm.scale); }, [&](torch::Tensor& t) { return t.mul(norm.scale); });
  if (mean_.defined()) {
    const auto mean = mean_.to(x.device()), std = std_.to(x.device());
    step([&](torch::Tensor& t) { return t.sub_(mean); }, [&](torch::Tensor& t) { return t.sub(mean); });
    step([&](torch::Tensor& t) { return t.div_(std); }, [&](torch::Tensor& t) { return t.div(std); });
  } else {
    if (norm.mean[0] != 0.0)
      step([&](torch::Tensor& t) { return t.sub_(norm.mean[0]); },
           [&](torch::Tensor& t) { return t.sub(norm.mean[0]); });
    if (norm.std[0] != 1.0)
      step([&](torch::Tensor& t) { return t.div_(norm.std[0]); }, [&](torch::Tensor& t) { return t.div(norm.std[0]); });
  }
  return {x, b.target.to(torch::kLong)};
}

std::optional<Batch> HostTensors::EvalSet() const {
  if (!o_.eval_inputs.defined()) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  if (!eval_) eval_ = Prepare({o_.eval_inputs.to(o_.device), o_.eval_labels.to(o_.device)});
  return eval_;
}

}  // namespace runx::data
