// channels_last must change the memory format of what runs: weights, inputs and conv outputs.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fake_trial.h"
#include "models/models.h"

namespace runx {
namespace {

const nlohmann::json kConfig = {{"data", {{"source", "synthetic"}, {"shape", {3, 16, 16}}}}};

TEST(ChannelsLast, ConvertsWeightsInputsAndConvOutputs) {
  auto model = models::MakeResNet(18, 3, 10);
  auto t = testing::LoadTechnique("channels_last");
  testing::FakeTrial trial(kConfig, model);
  const auto& w = model->named_parameters()["conv1.weight"];
  ASSERT_FALSE(w.is_contiguous(at::MemoryFormat::ChannelsLast));
  t->on_model(*model, trial);
  EXPECT_TRUE(model->named_parameters()["conv1.weight"].is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_EQ(trial.Last("channels_last_tensors"), 20);  // resnet18: 20 conv weights, no 4-D buffers

  Batch b{torch::randn({2, 3, 16, 16}), torch::zeros({2}, torch::kLong)};
  ASSERT_FALSE(b.input.is_contiguous(at::MemoryFormat::ChannelsLast));
  t->on_batch(b, trial);
  EXPECT_TRUE(b.input.is_contiguous(at::MemoryFormat::ChannelsLast));
  auto conv = model->named_children()["conv1"];
  auto out = conv->as<torch::nn::Conv2d>()->forward(b.input);
  EXPECT_TRUE(out.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_FALSE(out.is_contiguous());
}

TEST(ChannelsLast, DeclaresFlatDataIncompatible) {
  const nlohmann::json none = nlohmann::json::object();
  auto v = testing::Check("channels_last", none, {{"data", {{"source", "synthetic"}, {"shape", {100}}}}}, torch::kCPU);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason, "channels_last needs image samples [channels, height, width]; data.shape has 1 dimension(s)");
  EXPECT_TRUE(testing::Check("channels_last", none, kConfig, torch::kCPU).ok);
}

}  // namespace
}  // namespace runx
