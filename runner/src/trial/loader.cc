#include "trial/loader.h"

namespace runx::engine {
namespace {

/// Device-resident data: batches come ready from the source.
class DeviceLoader : public Loader {
 public:
  explicit DeviceLoader(data::DataSource& data) : data_(data) {}
  Batch next() override { return data_.Next(); }

 private:
  data::DataSource& data_;
};

/// Host data seen by a technique's loader.
class HostView : public HostBatches {
 public:
  explicit HostView(const data::DataSource& data) : data_(data) {}
  Batch get(int64_t index) const override { return data_.Get(index); }
  int64_t batch_size() const override { return data_.batch_size(); }
  int64_t batches_per_epoch() const override { return data_.batches_per_epoch(); }
  Batch prepare(Batch on_device) const override { return data_.Prepare(std::move(on_device)); }

 private:
  const data::DataSource& data_;
};

/// The default loader for host data.
class HostLoader : public Loader {
 public:
  HostLoader(const data::DataSource& data, c10::Device device) : data_(data), device_(device) {}
  Batch next() override {
    Batch b = data_.Get(index_++);
    if (device_.is_cpu()) return data_.Prepare(std::move(b));
    const bool pin = device_.is_cuda();
    auto move = [&](const torch::Tensor& t) { return (pin ? t.pin_memory() : t).to(device_, /*non_blocking=*/pin); };
    return data_.Prepare({move(b.input), move(b.target)});
  }

 private:
  const data::DataSource& data_;
  c10::Device device_;
  int64_t index_ = 0;
};

}  // namespace

TrialLoader MakeTrialLoader(data::DataSource& data, c10::Device device, std::vector<ActiveTechnique>& active,
                            TrialContext& ctx) {
  TrialLoader out;
  if (!data.on_host()) {
    out.loader = std::make_unique<DeviceLoader>(data);
    return out;
  }
  out.host = std::make_unique<HostView>(data);
  ForEachTechnique(active, "make_loader", [&](Technique& t) {
    if (!out.loader) out.loader = t.make_loader(*out.host, ctx);
  });
  if (!out.loader) out.loader = std::make_unique<HostLoader>(data, device);
  return out;
}

}  // namespace runx::engine
