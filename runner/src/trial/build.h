#pragma once
// The build phase of a trial: data source, model, optimizer and the step the techniques wrap.
#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "data/data.h"
#include "runx/plugin.h"
#include "spec/trial_config.h"
#include "trial/context.h"

namespace runx::engine {

/// Opens the data source of `trial` and builds its model on the context's device for the samples
/// the source declares (DataSource::sample_spec), seeded with `seed` again so that the initial
/// weights do not depend on what opening the data drew; records the source's facts in the
/// environment, param_count, and calls on_model. Afterwards ctx.data_ and ctx.model_ are set; the
/// caller owns the data source.
std::unique_ptr<data::DataSource> BuildModelAndData(const spec::TrialConfig& trial, uint64_t seed,
                                                    std::vector<ActiveTechnique>& active, RunnerContext& ctx);

/// The optimizer of train.optimizer: adamw, or sgd (the default: lr 0.1, momentum 0.9).
std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const spec::OptimizerConfig& optimizer,
                                                       torch::nn::Module& model);

/// Cross entropy of `logits` against `target`, the mean over every scored position: a classifier's
/// [B, C] against [B], or a language model's [B, T, V] against [B, T] (all B*T next-token
/// predictions). `reduction` as torch's (kMean, kSum).
torch::Tensor CrossEntropy(const torch::Tensor& logits, const torch::Tensor& target,
                           at::Reduction::Reduction reduction = at::Reduction::Mean);

/// The runner's own step on `model`. Training (`optimizer` set): cross-entropy loss, backward,
/// optimizer step and gradients set to none. Inference (`optimizer` null): the forward pass
/// returning the logits, nothing else.
Step BaseStep(models::Model& model, torch::optim::Optimizer* optimizer);

/// `step` wrapped by every technique's wrap_step in ascending wrap_order (the lowest innermost;
/// listed order among equals). An exception becomes a TechniqueFailure.
Step WrapStep(Step step, std::vector<ActiveTechnique>& active, TrialContext& ctx);

}  // namespace runx::engine
