// The pure parts of data parallelism: which gradients share a bucket, in which order buckets
// start, which rows of a global batch a rank trains on, and the reducer's averaging (with a fake
// process group that plays the other ranks).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "buckets.h"
#include "data/data.h"
#include "data/shard.h"
#include "reducer.h"
#include "spec/trial_config.h"
#include "sweep/child.h"
#include "trial/data_parallel.h"
#include "trial/process_group.h"

namespace runx {
namespace {

using data_parallel::AssignBuckets;
using data_parallel::GradSlot;
using data_parallel::LaunchableBuckets;
using Buckets = std::vector<std::vector<size_t>>;

TEST(Buckets, CloseOnceTheyHoldTheirCap) {
  // First bucket: 10 bytes; the rest: 100.
  EXPECT_EQ(AssignBuckets({{4, 0}, {4, 0}, {4, 0}, {60, 0}, {60, 0}, {8, 0}}, 100, 10),
            (Buckets{{0, 1, 2}, {3, 4}, {5}}));
}

TEST(Buckets, ALargeGradientStartsABucketOfItsOwn) {
  EXPECT_EQ(AssignBuckets({{500, 0}, {4, 0}, {4, 0}}, 100, 100), (Buckets{{0}, {1, 2}}));
  // ...and one that joins an open bucket closes it.
  EXPECT_EQ(AssignBuckets({{4, 0}, {500, 0}, {4, 0}}, 100, 100), (Buckets{{0, 1}, {2}}));
}

TEST(Buckets, NeverMixKinds) {
  EXPECT_EQ(AssignBuckets({{4, 0}, {4, 1}, {4, 1}, {4, 0}}, 100, 100), (Buckets{{0}, {1, 2}, {3}}));
}

TEST(Buckets, EveryGradientInExactlyOneBucket) {
  EXPECT_TRUE(AssignBuckets({}, 100, 10).empty());
  std::vector<GradSlot> slots;
  for (int i = 0; i < 50; ++i) slots.push_back({(i * 37) % 90 + 1, i / 20});
  size_t next = 0;
  for (const auto& b : AssignBuckets(slots, 120, 30))
    for (size_t i : b) EXPECT_EQ(i, next++);
  EXPECT_EQ(next, slots.size());
}

TEST(Buckets, StartInOrderOnly) {
  size_t next = 0;
  EXPECT_TRUE(LaunchableBuckets({false, true, true}, next).empty());  // bucket 0 not ready: wait
  EXPECT_EQ(next, 0u);
  EXPECT_EQ(LaunchableBuckets({true, true, false}, next), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(next, 2u);
  EXPECT_EQ(LaunchableBuckets({true, true, true}, next), (std::vector<size_t>{2}));
  EXPECT_EQ(next, 3u);
  EXPECT_TRUE(LaunchableBuckets({true, true, true}, next).empty());
}

TEST(Shards, ContiguousDisjointInRankOrder) {
  EXPECT_EQ(data::ShardOf(8, 0, 2).begin, 0);
  EXPECT_EQ(data::ShardOf(8, 1, 2).begin, 4);
  EXPECT_EQ(data::ShardOf(8, 1, 2).size, 4);
  EXPECT_EQ(data::ShardOf(12, 2, 3).begin, 8);
  EXPECT_EQ(data::ShardOf(5, 0, 1).size, 5);
}

TEST(Shards, UnevenOrBadSplitsAreRefused) {
  try {
    data::ShardOf(7, 0, 2);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "a global batch of 7 samples does not split into 2 equal shards");
  }
  EXPECT_THROW(data::ShardOf(8, 2, 2), std::invalid_argument);
  EXPECT_THROW(data::ShardOf(8, 0, 0), std::invalid_argument);
}

TEST(Shards, EachRankGetsItsRowsOfTheGlobalBatch) {
  for (const std::string placement : {"device", "host"}) {
    const nlohmann::json d{
        {"source", "synthetic"}, {"shape", {3}}, {"num_classes", 5}, {"batch_size", 6}, {"placement", placement}};
    auto whole = data::MakeDataSource(d, c10::Device(c10::kCPU), 3);
    std::vector<std::unique_ptr<data::DataSource>> ranks;
    for (int r = 0; r < 3; ++r)
      ranks.push_back(data::ShardSource(data::MakeDataSource(d, c10::Device(c10::kCPU), 3), r, 3));
    for (int step = 0; step < 2; ++step) {
      const Batch all = whole->on_host() ? whole->Get(step) : whole->Next();
      for (int r = 0; r < 3; ++r) {
        EXPECT_EQ(ranks[r]->batch_size(), 2);
        const Batch mine = ranks[r]->on_host() ? ranks[r]->Get(step) : ranks[r]->Next();
        EXPECT_TRUE(torch::equal(mine.input, all.input.narrow(0, 2 * r, 2))) << placement << " rank " << r;
        EXPECT_TRUE(torch::equal(mine.target, all.target.narrow(0, 2 * r, 2))) << placement << " rank " << r;
      }
    }
  }
}

/// A process group of `world` ranks in which the other ranks contribute `others` x this rank's
/// values; records each all-reduce's size, and whether it started while `in_backward` was set.
class FakeRanks : public Collectives {
 public:
  FakeRanks(int world, double others) : world_(world), others_(others) {}
  int rank() const override { return 0; }
  int world_size() const override { return world_; }
  std::string backend() const override { return "fake"; }
  std::unique_ptr<PendingCollective> all_reduce_sum(torch::Tensor t) override {
    sizes.push_back(t.numel());
    during_backward.push_back(in_backward);
    t.mul_(1 + others_);
    struct Done : PendingCollective {
      void wait() override {}
    };
    return std::make_unique<Done>();
  }
  void broadcast(torch::Tensor, int) override {}
  std::vector<int64_t> sizes;
  std::vector<bool> during_backward;
  bool in_backward = false;

 private:
  int world_;
  double others_;
};

struct Net : torch::nn::Module {
  Net() : a(register_module("a", torch::nn::Linear(4, 8))), b(register_module("b", torch::nn::Linear(8, 2))) {}
  torch::Tensor forward(torch::Tensor x) { return b(torch::relu(a(x))); }
  torch::nn::Linear a, b;
};

/// The gradients of one backward pass of `net` on fixed data, through `reducer` when given.
std::vector<torch::Tensor> Gradients(Net& net, data_parallel::GradientReducer* reducer, FakeRanks* ranks) {
  for (auto& p : net.parameters()) p.mutable_grad() = torch::Tensor();
  torch::manual_seed(1);
  const auto x = torch::randn({5, 4});
  auto loss = net.forward(x).pow(2).mean();
  if (reducer) reducer->BeginBackward();
  if (ranks) ranks->in_backward = true;
  loss.backward();
  if (ranks) ranks->in_backward = false;
  if (reducer) reducer->EndBackward();
  std::vector<torch::Tensor> out;
  for (auto& p : net.parameters()) out.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
  return out;
}

TEST(GradientReducer, AveragesOverTheRanks) {
  torch::manual_seed(0);
  Net net;
  const auto plain = Gradients(net, nullptr, nullptr);
  // The other rank has the same gradients: the average is this rank's own.
  FakeRanks same(2, 1.0);
  {
    data_parallel::GradientReducer reducer(net.parameters(), same, 1 << 20, 1 << 20);
    const auto reduced = Gradients(net, &reducer, &same);
    for (size_t i = 0; i < plain.size(); ++i) EXPECT_TRUE(torch::allclose(reduced[i], plain[i])) << i;
  }
  // Three other ranks with zero gradients: a quarter of this rank's.
  FakeRanks zeros(4, 0.0);
  data_parallel::GradientReducer reducer(net.parameters(), zeros, 1 << 20, 1 << 20);
  const auto reduced = Gradients(net, &reducer, &zeros);
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_TRUE(torch::allclose(reduced[i], plain[i] / 4)) << i;
}

TEST(GradientReducer, StartsBucketsDuringTheBackwardPassInReverseLayerOrder) {
  torch::manual_seed(0);
  Net net;
  FakeRanks ranks(2, 1.0);
  // Gradients in reverse registration order: b.bias (8 bytes), b.weight (64), a.bias (32),
  // a.weight (128). The first bucket closes at 8 bytes, the others at 64.
  data_parallel::GradientReducer reducer(net.parameters(), ranks, 64, 8);
  ASSERT_EQ(reducer.bucket_bytes(), (std::vector<int64_t>{8, 64, 160}));
  Gradients(net, &reducer, &ranks);
  EXPECT_EQ(ranks.sizes, (std::vector<int64_t>{2, 16, 40}));
  EXPECT_EQ(ranks.during_backward, (std::vector<bool>{true, true, true}));
  EXPECT_EQ(reducer.started_during_backward(), 3u);
  // The next pass starts afresh.
  Gradients(net, &reducer, &ranks);
  EXPECT_EQ(ranks.sizes.size(), 6u);
}

/// Registers `late` first but runs it last: its gradients come first, against registration order.
struct Reversed : torch::nn::Module {
  Reversed()
      : late(register_module("late", torch::nn::Linear(8, 2))),
        early(register_module("early", torch::nn::Linear(4, 8))) {}
  torch::Tensor forward(torch::Tensor x) { return late(torch::relu(early(x))); }
  torch::nn::Linear late, early;
};

TEST(GradientReducer, RebuildsItsBucketsInTheOrderTheGradientsCame) {
  torch::manual_seed(0);
  Reversed net;
  FakeRanks ranks(2, 1.0);
  // One bucket per tensor: in reverse registration order early's come first (bias 32 bytes,
  // weight 128), though its gradients come last.
  data_parallel::GradientReducer reducer(net.parameters(), ranks, 1, 1);
  ASSERT_EQ(reducer.bucket_bytes(), (std::vector<int64_t>{32, 128, 8, 64}));
  const auto step = [&] {
    for (auto& p : net.parameters()) p.mutable_grad() = torch::Tensor();
    torch::manual_seed(1);
    auto loss = net.forward(torch::randn({5, 4})).pow(2).mean();
    reducer.BeginBackward();
    loss.backward();
    reducer.EndBackward();
  };
  step();
  // First pass: nothing could start before early's gradients, the last to come.
  EXPECT_TRUE(ranks.sizes[0] == 8 || ranks.sizes[0] == 32) << ranks.sizes[0];
  std::vector<torch::Tensor> first;
  for (auto& p : net.parameters()) first.push_back(p.grad().clone());
  ranks.sizes.clear();
  step();
  // Rebuilt: late's gradients (2 and 16 values) first.
  ASSERT_EQ(ranks.sizes.size(), 4u);
  EXPECT_TRUE(ranks.sizes[0] == 2 || ranks.sizes[0] == 16) << ranks.sizes[0];
  EXPECT_TRUE(ranks.sizes[1] == 2 || ranks.sizes[1] == 16) << ranks.sizes[1];
  const auto params = net.parameters();
  for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(torch::allclose(params[i].grad(), first[i])) << i;
}

TEST(GradientReducer, AGradientThatNeverComesCountsAsZeroAndLeavesNoGrad) {
  torch::manual_seed(0);
  Net net;
  auto unused = net.register_parameter("unused", torch::ones({3}));
  FakeRanks ranks(2, 1.0);
  data_parallel::GradientReducer reducer(net.parameters(), ranks, 1 << 20, 1 << 20);
  const auto grads = Gradients(net, &reducer, &ranks);  // would hang without the end-of-pass start
  EXPECT_EQ(ranks.sizes.size(), 1u);
  EXPECT_FALSE(unused.grad().defined());
  EXPECT_EQ(ranks.during_backward, (std::vector<bool>{false}));  // it waited for the unused one
}

TEST(Ranks, HowManyProcessesATrialIs) {
  auto ranks = [](nlohmann::json optimizations) {
    return spec::TrialConfig::From({{"model", {{"name", "mlp"}}},
                                    {"data", {{"source", "synthetic"}, {"batch_size", 8}}},
                                    {"optimizations", std::move(optimizations)}})
        .ranks();
  };
  EXPECT_EQ(ranks(nlohmann::json::object()), 0);
  EXPECT_EQ(ranks({{"data_parallel", {{"world_size", 4}}}}), 4);
  EXPECT_EQ(ranks({{"data_parallel", {{"world_size", 1}}}}), 1);
  EXPECT_EQ(ranks({{"data_parallel", nlohmann::json::object()}}), 1);
}

TEST(Ranks, EachRankItsOwnGpu) {
  engine::RankRole role;
  role.local_rank = 2;
  EXPECT_EQ(engine::RankDevice(c10::Device("cuda:1"), role), c10::Device("cuda:3"));
  EXPECT_EQ(engine::RankDevice(c10::Device("cuda"), role), c10::Device("cuda:2"));
  EXPECT_EQ(engine::RankDevice(c10::Device("cpu"), role), c10::Device("cpu"));
}

TEST(Ranks, FromSrunOrTorchrun) {
  for (const char* v : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"})
    unsetenv(v);
  setenv("SLURM_PROCID", "3", 1);
  setenv("SLURM_NTASKS", "8", 1);
  setenv("SLURM_LOCALID", "1", 1);
  auto role = engine::RoleFromEnvironment("/shared/rdv");
  EXPECT_EQ(role.rank, 3);
  EXPECT_EQ(role.world, 8);
  EXPECT_EQ(role.local_rank, 1);
  EXPECT_EQ(role.rendezvous, "/shared/rdv");
  EXPECT_FALSE(role.local);
  setenv("RANK", "5", 1);  // torchrun's names win
  setenv("LOCAL_RANK", "0", 1);
  role = engine::RoleFromEnvironment("f");
  EXPECT_EQ(role.rank, 5);
  EXPECT_EQ(role.local_rank, 0);
  for (const char* v : {"RANK", "LOCAL_RANK", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"}) unsetenv(v);
}

TEST(Ranks, SrunEndsTheStepWhenARankFails) {
  using Words = std::vector<std::string>;
  unsetenv("RUNX_RANK_LAUNCHER");
  EXPECT_TRUE(engine::RankLauncherFromEnvironment().empty());
  setenv("RUNX_RANK_LAUNCHER", "srun  --gres=gpu:4", 1);
  EXPECT_EQ(engine::RankLauncherFromEnvironment(), (Words{"srun", "--kill-on-bad-exit=1", "--gres=gpu:4"}));
  setenv("RUNX_RANK_LAUNCHER", "/usr/bin/srun --kill-on-bad-exit=0", 1);
  EXPECT_EQ(engine::RankLauncherFromEnvironment(), (Words{"/usr/bin/srun", "--kill-on-bad-exit=0"}));
  // Another launcher is taken as written; its ranks must find RANK and WORLD_SIZE (or srun's names).
  setenv("RUNX_RANK_LAUNCHER", "mpirun -x FOO", 1);
  EXPECT_EQ(engine::RankLauncherFromEnvironment(), (Words{"mpirun", "-x", "FOO"}));
  unsetenv("RUNX_RANK_LAUNCHER");
}

}  // namespace
}  // namespace runx
