// auto_batch, memory, prefetch and cuda_graphs through the real runx binary and the real store.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <nlohmann/json.hpp>

#include "store_fixture.h"

namespace {

class Resources : public runx::testing::StoreFixture {
 protected:
  Resources() : StoreFixture("runx_resources") {}
};

const char* kMlp =
    "device: cpu\n"
    "model: {name: mlp, hidden: [256, 256]}\n"
    "train: {warmup_steps: 1, steps: 3, eval: false, optimizer: {name: sgd, lr: 0.01}}\n";

TEST_F(Resources, AutoBatchFindsTheLargestBatchUnderAHostLimit) {
  const int64_t limit = 8 << 20;  // the model, its gradients, momentum and a snapshot take ~5.5 MB
  const auto id = Run(std::string("name: auto\n") + kMlp +
                      "data: {source: synthetic, shape: [1024], num_classes: 10, batch_size: auto}\n"
                      "optimizations:\n  memory: {limit_bytes: " +
                      std::to_string(limit) +
                      "}\n"
                      "  auto_batch: {multiple_of: 1, probe_steps: 1, headroom: 1.0}\n");
  ASSERT_EQ(Get("SELECT status FROM trials WHERE id = ?", id), "ok")
      << last_output_ << Get("SELECT error FROM trials WHERE id = ?", id);
  const auto chosen = static_cast<int64_t>(Metric(id, "auto_batch.chosen"));
  EXPECT_GT(chosen, 32);
  EXPECT_LT(chosen, 65536);  // the limit, not the search's ceiling, stopped it
  // The frontier proves it: `chosen` fits, `chosen + 1` does not, and every fit stayed under the limit.
  const auto frontier = nlohmann::json::parse(Env(id, "auto_batch.frontier"));
  bool fits = false, next_fails = false;
  for (const auto& p : frontier) {
    if (p["batch"] == chosen) fits = p["fits"].get<bool>();
    if (p["batch"] == chosen + 1) next_fails = !p["fits"].get<bool>();
    if (p["fits"].get<bool>()) EXPECT_LE(p["peak_bytes"].get<int64_t>(), limit);
  }
  EXPECT_TRUE(fits) << frontier.dump();
  EXPECT_TRUE(next_fails) << frontier.dump();
  // Training ran at that batch.
  EXPECT_EQ(Get("SELECT min(samples) || '/' || max(samples) FROM steps WHERE trial_id = ?", id),
            std::to_string(chosen) + "/" + std::to_string(chosen));
  EXPECT_EQ(Metric(id, "batch_size"), static_cast<double>(chosen));
}

TEST_F(Resources, AHostLimitTurnsRunawayMemoryIntoAnOomResult) {
  const auto id = Run(std::string("name: oom\n") + kMlp +
                      "data: {source: synthetic, shape: [1024], num_classes: 10, batch_size: 4096}\n"
                      "optimizations: {memory: {limit_bytes: 4000000}}\n");
  EXPECT_EQ(Get("SELECT status FROM trials WHERE id = ?", id), "oom") << last_output_;
  EXPECT_NE(Get("SELECT error FROM trials WHERE id = ?", id).find("host memory limit"), std::string::npos);
}

TEST_F(Resources, PrefetchHidesASlowHostSource) {
  const std::string base = std::string(
      "device: cpu\nmodel: {name: mlp, hidden: [32]}\n"
      "train: {warmup_steps: 2, steps: 20, eval: false}\n"
      "data: {source: synthetic, placement: host, produce_ms: 20, shape: [64], num_classes: 4, batch_size: 16}\n");
  const auto plain = Run("name: plain\n" + base, "plain");
  ASSERT_EQ(Get("SELECT status FROM trials WHERE id = ?", plain), "ok") << last_output_;
  const auto pre = Run("name: pre\n" + base + "optimizations: {prefetch: {workers: 4}}\n", "pre");
  ASSERT_EQ(Get("SELECT status FROM trials WHERE id = ?", pre), "ok") << last_output_;
  const double wait_plain =
      std::stod(Get("SELECT avg(data_ms) FROM steps WHERE trial_id = ? AND phase = 'measure'", plain));
  const double wait_pre =
      std::stod(Get("SELECT avg(data_ms) FROM steps WHERE trial_id = ? AND phase = 'measure'", pre));
  EXPECT_GT(wait_plain, 15.0);            // every step waited for its batch to be made
  EXPECT_LT(wait_pre, 0.5 * wait_plain);  // four workers made them ahead
  EXPECT_FALSE(std::isnan(Metric(pre, "prefetch.wait_ms_mean")));
}

TEST_F(Resources, CudaGraphsCaptureOnceAndReplayEveryStep) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const auto id =
      Run("name: graphs\ndevice: cuda\nmodel: {name: mlp, hidden: [512, 512]}\n"
          "data: {source: synthetic, shape: [512], num_classes: 10, batch_size: 64}\n"
          "train: {warmup_steps: 5, steps: 30, eval: false, optimizer: {name: sgd, lr: 0.05}}\n"
          "optimizations: {cuda_graphs: {warmup: 3}}\n");
  ASSERT_EQ(Get("SELECT status FROM trials WHERE id = ?", id), "ok") << last_output_;
  EXPECT_EQ(Metric(id, "cuda_graphs.captures"), 1);
  EXPECT_EQ(Metric(id, "cuda_graphs.eager_steps"), 3);
  EXPECT_EQ(Metric(id, "cuda_graphs.replays"), 32);  // every other step, the capturing one included
  // Replays train: the loss moves step to step and ends lower than it started.
  const double first =
      std::stod(Get("SELECT loss FROM steps WHERE trial_id = ? AND phase = 'warmup' AND step = 4", id));
  const double last =
      std::stod(Get("SELECT loss FROM steps WHERE trial_id = ? AND phase = 'measure' AND step = 29", id));
  EXPECT_LT(last, first);
  EXPECT_GT(std::stoi(Get("SELECT count(DISTINCT loss) FROM steps WHERE trial_id = ?", id)), 25);
}

TEST_F(Resources, CudaGraphsReplayTheInferencePass) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const auto id =
      Run("name: graphs_infer\ndevice: cuda\ntask: infer\nmodel: {name: mlp, hidden: [512, 512]}\n"
          "data: {source: synthetic, shape: [512], num_classes: 10, batch_size: 1}\n"
          "infer: {warmup_steps: 5, steps: 30, eval: false}\n"
          "optimizations: {cuda_graphs: {warmup: 3}}\n");
  ASSERT_EQ(Status(id), "ok") << last_output_ << Error(id);
  EXPECT_EQ(Metric(id, "cuda_graphs.captures"), 1);
  EXPECT_EQ(Metric(id, "cuda_graphs.eager_steps"), 3);
  EXPECT_EQ(Metric(id, "cuda_graphs.replays"), 32);
  EXPECT_EQ(Get("SELECT count(*) FROM steps WHERE trial_id = ? AND loss IS NOT NULL", id), "0");
}

TEST_F(Resources, CudaGraphsCaptureFusedAdamW) {
  // fused_optimizer's fused AdamW counts its steps on the device, so the whole AdamW step can be
  // captured: the replayed trial must train like the eager one, step for step.
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const std::string base =
      "device: cuda\nseed: 3\nmodel: {name: mlp, hidden: [256, 256]}\n"
      "data: {source: synthetic, shape: [128], num_classes: 10, batch_size: 64}\n"
      "train: {warmup_steps: 5, steps: 30, eval: false, optimizer: {name: adamw, lr: 0.001}}\n";
  const auto eager = Run("name: eager\n" + base + "optimizations: {fused_optimizer: {kernel: fused}}\n", "eager");
  ASSERT_EQ(Status(eager), "ok") << last_output_ << Error(eager);
  const auto graphs =
      Run("name: graphs\n" + base + "optimizations: {fused_optimizer: {kernel: fused}, cuda_graphs: {}}\n", "graphs");
  ASSERT_EQ(Status(graphs), "ok") << last_output_ << Error(graphs);
  EXPECT_EQ(Metric(graphs, "cuda_graphs.captures"), 1);
  EXPECT_EQ(Metric(graphs, "cuda_graphs.replays"), 32);
  SQLite::Database db(db_);
  SQLite::Statement q(db,
                      "SELECT a.loss, b.loss FROM steps a JOIN steps b ON a.phase = b.phase AND a.step = b.step "
                      "WHERE a.trial_id = ? AND b.trial_id = ? ORDER BY a.phase DESC, a.step");
  q.bind(1, eager);
  q.bind(2, graphs);
  int rows = 0;
  double first = 0, last = 0;
  while (q.executeStep()) {
    const double a = q.getColumn(0).getDouble(), b = q.getColumn(1).getDouble();
    EXPECT_NEAR(a, b, 1e-4 * std::max(1.0, std::abs(a))) << "step row " << rows;
    if (rows == 0) first = b;
    last = b;
    ++rows;
  }
  EXPECT_EQ(rows, 35);
  EXPECT_LT(last, first);  // the captured AdamW steps train
  // The foreach AdamW keeps its step count on the host: refused.
  const auto foreach = Run(
      "name: foreach\n" + base + "optimizations: {fused_optimizer: {kernel: foreach}, cuda_graphs: {}}\n", "foreach");
  EXPECT_EQ(Status(foreach), "incompatible");
}

}  // namespace
