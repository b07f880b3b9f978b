// The order of the trials (interleaved / shuffled / sequential) and shards.
#include <algorithm>
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

#include "spec/schedule.h"
#include "spec/sweep.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;
using Strings = std::vector<std::string>;

const std::string kThree = "sweep: {axes: {data.batch_size: [4, 8, 16]}}\n";

TEST(Sweep, InterleavedOrder) {
  const Plan plan = PlanOf("repeats: 3\n" + kThree);
  EXPECT_EQ(plan.repeats, 3);
  EXPECT_EQ(plan.order, "interleaved");
  EXPECT_EQ(Sequence(plan), (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1, 2}));
  for (size_t i = 0; i < plan.trials.size(); ++i) {
    EXPECT_EQ(plan.trials[i].order_index, static_cast<int>(i));
    EXPECT_EQ(plan.trials[i].repeat_index, static_cast<int>(i / 3));
  }
}

TEST(Sweep, SequentialOrder) {
  const Plan plan = PlanOf("repeats: 3\norder: sequential\n" + kThree);
  EXPECT_EQ(Sequence(plan), (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(plan.trials[4].repeat_index, 1);
  EXPECT_EQ(plan.trials[4].order_index, 4);
}

TEST(Sweep, ShuffledOrderIsSeeded) {
  const std::string sweep = "sweep: {axes: {data.batch_size: [1, 2, 3, 4, 5, 6]}}\nrepeats: 4\norder: shuffled\n";
  const Plan a = PlanOf(sweep + "order_seed: 7\n");
  EXPECT_EQ(a.order_seed, 7u);
  EXPECT_EQ(Sequence(a), Sequence(PlanOf(sweep + "order_seed: 7\n")));
  EXPECT_NE(Sequence(a), Sequence(PlanOf(sweep + "order_seed: 8\n")));
  // Each round is a permutation of the variants; the rounds differ.
  std::set<std::vector<int>> rounds;
  const std::vector<int> sequence = Sequence(a);
  for (int r = 0; r < 4; ++r) {
    std::vector<int> round(sequence.begin() + r * 6, sequence.begin() + (r + 1) * 6);
    EXPECT_EQ(a.trials[static_cast<size_t>(r) * 6].repeat_index, r);
    rounds.insert(round);
    std::sort(round.begin(), round.end());
    EXPECT_EQ(round, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  }
  EXPECT_GT(rounds.size(), 1u);
  // Without order_seed, the experiment's seed.
  EXPECT_EQ(PlanOf(sweep + "seed: 11\n").order_seed, 11u);
  EXPECT_EQ(Sequence(PlanOf(sweep + "seed: 11\n")), Sequence(PlanOf(sweep + "order_seed: 11\n")));
}

TEST(Sweep, ShardsPartitionThePlan) {
  const Plan plan = PlanOf("repeats: 3\n" + kThree);
  const Plan s0 = Shard(plan, "0/2"), s1 = Shard(plan, "1/2");
  EXPECT_EQ(s0.trials.size() + s1.trials.size(), plan.trials.size());
  std::set<int> seen;
  for (const auto* s : {&s0, &s1})
    for (const auto& t : s->trials) {
      EXPECT_TRUE(seen.insert(t.order_index).second);
      EXPECT_EQ(t.order_index % 2, s == &s0 ? 0 : 1);
    }
  EXPECT_EQ(seen.size(), plan.trials.size());
  EXPECT_EQ(s1.shard_index, 1);
  EXPECT_EQ(s1.shard_count, 2);
  EXPECT_EQ(Shard(plan, "0/1").trials.size(), plan.trials.size());
}

TEST(Sweep, BadShards) {
  const Plan plan = PlanOf("");
  const auto message = [&](const std::string& spec) {
    try {
      Shard(plan, spec);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("2/2"),
            "invalid shard '2/2': the shard index must be less than the count 2 (shards are counted from 0)");
  EXPECT_EQ(message("0/0"), "invalid shard '0/0': the shard count must be at least 1");
  for (const char* bad : {"", "1", "a/b", "-1/2", "1/2/3", " 1/2", "1/", "/2", "99999999999/2"})
    EXPECT_EQ(message(bad),
              "invalid shard '" + std::string(bad) + "': expected 'i/n', shard i of n counted from 0, e.g. '0/4'");
}

using Pairs = std::vector<std::pair<int, int>>;

TEST(Schedule, EachOrderOnItsOwn) {
  EXPECT_EQ(Schedule(TrialOrder::kInterleaved, 2, 2, 0), (Pairs{{0, 0}, {1, 0}, {0, 1}, {1, 1}}));
  EXPECT_EQ(Schedule(TrialOrder::kSequential, 2, 2, 0), (Pairs{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
  EXPECT_EQ(Schedule(TrialOrder::kShuffled, 5, 3, 9), Schedule(TrialOrder::kShuffled, 5, 3, 9));
  EXPECT_EQ(Schedule(TrialOrder::kShuffled, 5, 3, 9).size(), 15u);
  EXPECT_EQ(Schedule(TrialOrder::kInterleaved, 1, 1, 0), (Pairs{{0, 0}}));
}

}  // namespace
}  // namespace runx::spec::test
