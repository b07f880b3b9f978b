#pragma once
// The evaluation phase of a trial: accuracy on the held-out split.
#include <functional>
#include <vector>

#include <torch/torch.h>

#include "data/data.h"
#include "engine/trial_context.h"
#include "models/models.h"
#include "runx/plugin.h"

namespace runx::engine {

/// Accuracy on the held-out split (NaN when the data has none), in chunks of 1000 samples that
/// each go through on_batch, `forward` mapping a batch to logits: the model's own forward pass
/// after training, the wrapped (optimized) step for `task: infer`. The model is in eval mode
/// meanwhile, without gradients.
double Accuracy(models::Model& model, data::DataSource& data, std::vector<ActiveTechnique>& active,
                TrialContext& ctx, const std::function<torch::Tensor(Batch&)>& forward);

}  // namespace runx::engine
