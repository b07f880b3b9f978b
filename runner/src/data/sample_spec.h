#pragma once
/// What one sample of a data source is once it reaches the model: the input's shape and dtype, and
/// the target's. Data sources declare it; models and the runner read it instead of assuming float
/// images with one class label. The data module owns it (models read it); it is not part of the
/// plugin API in runner/include/runx/ (plugin.h does not use it).
#include <cstdint>
#include <vector>

#include <c10/core/ScalarType.h>

namespace runx {

struct SampleSpec {
  std::vector<int64_t> input_shape;           ///< one sample, without the batch dimension
  c10::ScalarType input_dtype = c10::kFloat;  ///< kFloat for images and features, kLong for token ids
  std::vector<int64_t> target_shape;          ///< {}: one class per sample; {L}: one per position
  c10::ScalarType target_dtype = c10::kLong;
  int64_t num_classes = 0;  ///< classes, or the vocabulary of token ids

  /// Whether the inputs are token ids (integers indexing a vocabulary of num_classes).
  bool tokens() const { return !c10::isFloatingType(input_dtype); }
  /// Positions one sample is scored at: 1 for a class label, L for next-token targets.
  int64_t positions() const {
    int64_t n = 1;
    for (auto d : target_shape) n *= d;
    return n;
  }
};

}  // namespace runx
