// task: infer through the real runx binary: synchronized forward passes, no training, the
// training-only techniques refused, auto_batch probing forward passes, and a model exported by a
// training trial measured with the accuracy it was trained to.
#include <cmath>
#include <map>
#include <string>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <torch/script.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "../jit_linear.h"
#include "store_fixture.h"

namespace {
namespace fs = std::filesystem;

class Infer : public runx::testing::StoreFixture {
 protected:
  Infer() : StoreFixture("runx_infer") {}
};

const char* kSynthetic =
    "device: cpu\n"
    "model: {name: mlp, hidden: [64]}\n"
    "data: {source: synthetic, shape: [32], num_classes: 4, batch_size: 4}\n";

TEST_F(Infer, MeasuresSynchronizedForwardPassesAndRecordsLatency) {
  const auto id = Run(std::string("name: infer\ntask: infer\n") + kSynthetic +
                      "infer: {warmup_steps: 2, steps: 12, eval: false}\n");
  ASSERT_EQ(Status(id), "ok") << last_output_ << Error(id);
  EXPECT_EQ(Get("SELECT group_concat(phase || ':' || n) FROM (SELECT phase, count(*) AS n FROM steps "
                "WHERE trial_id = ? GROUP BY phase ORDER BY phase)",
                id),
            "measure:12,warmup:2");
  EXPECT_EQ(Get("SELECT count(*) FROM steps WHERE trial_id = ? AND loss IS NOT NULL", id), "0");  // no loss
  EXPECT_EQ(Get("SELECT min(samples) || '/' || max(samples) FROM steps WHERE trial_id = ?", id), "4/4");
  // Throughput and latency figures are the measured passes' own.
  const double total_ms = std::stod(Get("SELECT sum(wall_ms) FROM steps WHERE trial_id = ? AND phase = 'measure'", id));
  EXPECT_NEAR(Metric(id, "samples_per_s"), 4 * 12 * 1000.0 / total_ms, 1e-6 * Metric(id, "samples_per_s"));
  EXPECT_GE(Metric(id, "step_ms_p99"), Metric(id, "step_ms_median"));
  EXPECT_TRUE(std::isnan(Metric(id, "final_loss")));
  // The trial is labelled and stored like any other: the summary view has it.
  EXPECT_EQ(Get("SELECT label FROM trial_summary WHERE trial_id = ?", id), "baseline");
}

TEST_F(Infer, TrainingOnlyTechniquesAreIncompatible) {
  const auto anomaly = Run(std::string("name: a\ntask: infer\n") + kSynthetic + "optimizations: [anomaly]\n", "a");
  EXPECT_EQ(Status(anomaly), "incompatible");
  EXPECT_EQ(Error(anomaly),
            "anomaly: anomaly checks the loss and the gradients of training steps; task 'infer' has neither");
  const auto fused =
      Run(std::string("name: f\ntask: infer\n") + kSynthetic + "optimizations: [fused_optimizer]\n", "f");
  EXPECT_EQ(Status(fused), "incompatible");
  EXPECT_NE(Error(fused).find("task 'infer' has none"), std::string::npos) << Error(fused);
  const auto scaled = Run(
      std::string("name: s\ntask: infer\n") + kSynthetic + "optimizations: {amp: {dtype: bf16, loss_scale: dynamic}}\n",
      "s");
  EXPECT_EQ(Status(scaled), "incompatible");
  EXPECT_NE(Error(scaled).find("loss scaling protects training gradients"), std::string::npos) << Error(scaled);
  // bf16 autocast alone is what inference keeps of amp.
  const auto bf16 = Run(std::string("name: b\ntask: infer\nprecision: bf16\n") + kSynthetic +
                            "infer: {warmup_steps: 1, steps: 3, eval: false}\n",
                        "b");
  EXPECT_EQ(Status(bf16), "ok") << Error(bf16);
  EXPECT_EQ(Get("SELECT value FROM environment WHERE trial_id = ? AND key LIKE 'note.%' AND value LIKE 'amp:%'", bf16),
            "amp: autocast to bf16, no loss scaling");
}

TEST_F(Infer, EachTaskRejectsTheOtherTasksSection) {
  auto write = [&](const std::string& name, const std::string& yaml) {
    const auto p = dir_ / (name + ".yaml");
    std::ofstream(p) << yaml;
    return runx::testing::Runx(p.string() + " --db " + db_);
  };
  auto r = write("no_task", std::string("name: x\n") + kSynthetic + "infer: {steps: 5}\n");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("no_task.yaml:5:1: error: 'infer' is not used by task 'train'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("add 'task: infer'"), std::string::npos) << r.out;
  r = write("with_train", std::string("name: x\ntask: infer\n") + kSynthetic + "train: {steps: 5}\n");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("with_train.yaml:6:1: error: 'train' is not used by task 'infer'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("task 'infer' is set at line 2"), std::string::npos) << r.out;
}

TEST_F(Infer, AutoBatchProbesForwardPassesOnly) {
  // The same search under the same limit for training and for inference: at every batch both
  // probed, the inference probe's peak lacks at least the gradients (a copy of the weights; the
  // momentum too after the first update), so the batch it finds is larger.
  const std::string common =
      "device: cpu\nmodel: {name: mlp, hidden: [256, 256]}\n"
      "data: {source: synthetic, shape: [1024], num_classes: 10, batch_size: auto}\n"
      "optimizations:\n  memory: {limit_bytes: 8388608}\n  auto_batch: {multiple_of: 1, probe_steps: 1}\n";
  const auto train = Run("name: t\ntrain: {warmup_steps: 1, steps: 2, eval: false}\n" + common, "t");
  ASSERT_EQ(Status(train), "ok") << last_output_ << Error(train);
  const auto infer = Run("name: i\ntask: infer\ninfer: {warmup_steps: 1, steps: 2, eval: false}\n" + common, "i");
  ASSERT_EQ(Status(infer), "ok") << last_output_ << Error(infer);
  const double trained = Metric(train, "auto_batch.chosen"), inferred = Metric(infer, "auto_batch.chosen");
  EXPECT_GT(inferred, trained);
  const double weight_bytes = 4 * Metric(infer, "param_count");
  std::map<int64_t, int64_t> train_peak;
  for (const auto& p : nlohmann::json::parse(Env(train, "auto_batch.frontier")))
    if (p["fits"].get<bool>()) train_peak[p["batch"].get<int64_t>()] = p["peak_bytes"].get<int64_t>();
  int compared = 0;
  for (const auto& p : nlohmann::json::parse(Env(infer, "auto_batch.frontier"))) {
    const auto it = train_peak.find(p["batch"].get<int64_t>());
    if (!p["fits"].get<bool>() || it == train_peak.end()) continue;
    EXPECT_LE(static_cast<double>(p["peak_bytes"].get<int64_t>()) + weight_bytes, static_cast<double>(it->second))
        << "batch " << it->first;
    ++compared;
  }
  EXPECT_GE(compared, 5);  // 1, 2, 4, ... fit in both
  EXPECT_EQ(Metric(infer, "batch_size"), inferred);
  EXPECT_EQ(Get("SELECT max(samples) FROM steps WHERE trial_id = ?", infer),
            std::to_string(static_cast<int64_t>(inferred)));
}

TEST_F(Infer, AnExportedModelKeepsTheAccuracyItWasTrainedTo) {
  // A TorchScript MLP for Fashion-MNIST images, trained by runx and exported (frozen, optimized
  // for inference); then the exported file measured with task: infer.
  torch::manual_seed(5);
  torch::jit::Module net("Net");
  net.register_attribute("training", c10::BoolType::get(), true);
  net.register_module("fc1", runx::testing::JitLinear("Fc1", 784, 64, 1.0 / std::sqrt(784.0), 0.0));
  net.register_module("fc2", runx::testing::JitLinear("Fc2", 64, 10, 1.0 / 8.0, 0.0));
  net.define("def forward(self, x):\n  return self.fc2.forward(torch.relu(self.fc1.forward(x.flatten(1))))\n");
  for (auto p : net.parameters()) p.set_requires_grad(true);
  const auto file = (dir_ / "net.pt").string();
  net.save(file);

  const auto train = Run("name: train\ndevice: cpu\nmodel: {name: torchscript, path: " + file +
                             "}\n"
                             "data: {source: fashion-mnist, batch_size: 64, train_limit: 12000}\n"
                             "train: {warmup_steps: 1, steps: 150, optimizer: {name: adamw, lr: 0.002}}\n"
                             "optimizations: [export]\n",
                         "train");
  ASSERT_EQ(Status(train), "ok") << last_output_ << Error(train);
  const double trained = Metric(train, "accuracy");
  EXPECT_GT(trained, 0.7);  // far from chance (0.1): the weights are the trained ones
  const auto frozen = Env(train, "export.torchscript");
  ASSERT_FALSE(frozen.empty());

  const auto infer = Run("name: infer\ndevice: cpu\ntask: infer\nmodel: {name: torchscript, path: " + frozen +
                             "}\n"
                             "data: {source: fashion-mnist, batch_size: 1}\n"
                             "infer: {warmup_steps: 2, steps: 20}\n",
                         "infer");
  ASSERT_EQ(Status(infer), "ok") << last_output_ << Error(infer);
  EXPECT_NEAR(Metric(infer, "accuracy"), trained, 0.002);  // the same 10k test images, the same function
  EXPECT_EQ(Metric(infer, "batch_size"), 1);
}

}  // namespace
