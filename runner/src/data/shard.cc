#include "data/shard.h"

#include <stdexcept>

#include <fmt/format.h>

namespace runx::data {
namespace {

class Sharded : public DataSource {
 public:
  Sharded(std::unique_ptr<DataSource> global, int rank, int world)
      : global_(std::move(global)), rank_(rank), world_(world), range_(ShardOf(global_->batch_size(), rank, world)) {}
  std::vector<int64_t> sample_shape() const override { return global_->sample_shape(); }
  int64_t num_classes() const override { return global_->num_classes(); }
  SampleSpec sample_spec() const override { return global_->sample_spec(); }
  std::vector<std::pair<std::string, std::string>> Facts() const override { return global_->Facts(); }
  int64_t batch_size() const override { return range_.size; }
  int64_t batches_per_epoch() const override { return global_->batches_per_epoch(); }
  void set_batch_size(int64_t n) override {
    global_->set_batch_size(n * world_);
    range_ = ShardOf(global_->batch_size(), rank_, world_);
  }
  bool on_host() const override { return global_->on_host(); }
  Batch Next() override { return Slice(global_->Next()); }
  Batch Get(int64_t index) const override { return Slice(global_->Get(index)); }
  Batch Prepare(Batch on_device) const override { return global_->Prepare(std::move(on_device)); }
  std::optional<Batch> EvalSet() const override { return global_->EvalSet(); }

 private:
  Batch Slice(Batch b) const {
    return {b.input.narrow(0, range_.begin, range_.size), b.target.narrow(0, range_.begin, range_.size)};
  }
  std::unique_ptr<DataSource> global_;
  int rank_, world_;
  ShardRange range_;
};

}  // namespace

ShardRange ShardOf(int64_t global_batch, int rank, int world) {
  if (world < 1 || rank < 0 || rank >= world)
    throw std::invalid_argument(fmt::format("rank {} of world size {} is not a rank", rank, world));
  if (global_batch < world || global_batch % world != 0)
    throw std::invalid_argument(
        fmt::format("a global batch of {} samples does not split into {} equal shards", global_batch, world));
  const int64_t size = global_batch / world;
  return {rank * size, size};
}

std::unique_ptr<DataSource> ShardSource(std::unique_ptr<DataSource> global, int rank, int world) {
  return std::make_unique<Sharded>(std::move(global), rank, world);
}

}  // namespace runx::data
