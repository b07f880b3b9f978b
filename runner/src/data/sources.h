#pragma once
// The data sources behind MakeDataSource, and what they share (internal to runner/src/data).
#include <cstdint>
#include <memory>

#include <c10/core/Device.h>
#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "data/data.h"
#include "spec/trial_config.h"

namespace runx::data {

// Each source reads the keys every source has (batch_size, shuffle, placement) through
// spec::DataConfig::From(d), and its own keys from `d`.

std::unique_ptr<DataSource> MakeSynthetic(const nlohmann::json& d, const c10::Device& device, uint64_t seed);
std::unique_ptr<DataSource> MakeFashionMnist(const nlohmann::json& d, const c10::Device& device, uint64_t seed);
std::unique_ptr<DataSource> MakeMemmap(const nlohmann::json& d, const c10::Device& device, uint64_t seed);
std::unique_ptr<DataSource> MakeText(const nlohmann::json& d, const c10::Device& device, uint64_t seed);

/// Fashion-MNIST as stored: uint8 images [N, 1, 28, 28], int64 labels [N]; the training split cut
/// to data.train_limit.
struct FashionMnistArrays {
  torch::Tensor train_x, train_y, test_x, test_y;
};
FashionMnistArrays LoadFashionMnist(const nlohmann::json& d);

/// Fashion-MNIST's pixel mean and standard deviation, after scaling to [0, 1].
constexpr double kFashionMnistMean = 0.2860, kFashionMnistStd = 0.3530;

}  // namespace runx::data
