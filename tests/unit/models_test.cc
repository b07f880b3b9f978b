#include "models/models.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "spec/catalogue.h"

namespace runx::models {

// The catalogue declares each model's keys (torch-free); BuildModel builds exactly its models.
TEST(Models, BuildsEveryModelOfTheCatalogue) { EXPECT_EQ(ModelNames(), spec::ModelCatalogue().Names()); }

TEST(Models, ResNetParameterCountsMatchTorchvision) {
  EXPECT_EQ(ParameterCount(*MakeResNet(50, 3, 1000)), 25557032);
  EXPECT_EQ(ParameterCount(*MakeResNet(18, 3, 1000)), 11689512);
}

TEST(Models, ForwardShapes) {
  torch::NoGradGuard g;
  auto mlp = BuildModel({{"name", "mlp"}, {"hidden", {32, 16}}}, {1, 28, 28}, 10);
  EXPECT_EQ(mlp->forward(torch::randn({4, 1, 28, 28})).sizes(), (std::vector<int64_t>{4, 10}));
  auto cnn = BuildModel({{"name", "cnn"}, {"channels", {8}}}, {1, 28, 28}, 10);
  EXPECT_EQ(cnn->forward(torch::randn({2, 1, 28, 28})).sizes(), (std::vector<int64_t>{2, 10}));
  auto r18 = BuildModel({{"name", "resnet18"}, {"num_classes", 7}}, {3, 32, 32}, 10);
  EXPECT_EQ(r18->forward(torch::randn({2, 3, 32, 32})).sizes(), (std::vector<int64_t>{2, 7}));
}

TEST(Models, ImageModelsRefuseFlatSamples) {
  try {
    BuildModel({{"name", "cnn"}}, {100}, 10);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "model 'cnn' needs image samples [channels, height, width], got 1-D samples");
  }
}

}  // namespace runx::models
