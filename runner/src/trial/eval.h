#pragma once
// The evaluation phase of a trial: accuracy and loss on the held-out split.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <torch/torch.h>

#include "data/data.h"
#include "models/models.h"
#include "runx/plugin.h"
#include "trial/context.h"

namespace runx::engine {

/// What the model scores on the held-out split, over every scored position (one per sample for a
/// classifier, every next-token prediction for a language model).
struct Evaluation {
  double accuracy = 0;  ///< the fraction of positions whose largest logit is the target
  double loss = 0;      ///< the mean cross entropy (the language model's validation loss)
  int64_t positions = 0;
};

/// The evaluation on the held-out split (nullopt when the data has none), in chunks of at most
/// 1000 samples and 16384 positions that each go through on_batch, `forward` mapping a batch to
/// logits: the model's own forward pass after training, the wrapped (optimized) step for `task:
/// infer`. The model is in eval mode meanwhile, without gradients.
std::optional<Evaluation> Evaluate(models::Model& model, data::DataSource& data, std::vector<ActiveTechnique>& active,
                                   TrialContext& ctx, const std::function<torch::Tensor(Batch&)>& forward);

/// Evaluate's trial metrics: accuracy and val_loss, and for token data perplexity, exp(val_loss).
void RecordEvaluation(const Evaluation& e, const SampleSpec& spec, TrialContext& ctx);

}  // namespace runx::engine
