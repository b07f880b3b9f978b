#include "trial/eval.h"

#include <algorithm>
#include <cmath>

#include "trial/build.h"

namespace runx::engine {
namespace {

constexpr int64_t kChunkSamples = 1000, kChunkPositions = 16384;

}  // namespace

std::optional<Evaluation> Evaluate(models::Model& model, data::DataSource& data, std::vector<ActiveTechnique>& active,
                                   TrialContext& ctx, const std::function<torch::Tensor(Batch&)>& forward) {
  auto eval = data.EvalSet();
  if (!eval) return std::nullopt;
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  const int64_t n = eval->input.size(0);
  const int64_t per_sample = std::max<int64_t>(1, eval->target.numel() / std::max<int64_t>(1, n));
  const int64_t chunk = std::min(kChunkSamples, std::max<int64_t>(1, kChunkPositions / per_sample));
  const auto on = torch::TensorOptions().device(eval->input.device());
  torch::Tensor hits = torch::zeros({}, on.dtype(torch::kLong)), loss = torch::zeros({}, on.dtype(torch::kDouble));
  for (int64_t i = 0; i < n; i += chunk) {
    const int64_t len = std::min(chunk, n - i);
    Batch b{eval->input.narrow(0, i, len), eval->target.narrow(0, i, len)};
    ForEachTechnique(active, "on_batch", [&](Technique& t) { t.on_batch(b, ctx); });
    const auto logits = forward(b).to(torch::kFloat);
    hits += logits.argmax(-1).eq(b.target).sum();
    loss += CrossEntropy(logits, b.target, at::Reduction::Sum).to(torch::kDouble);
  }
  model.train(was_training);
  Evaluation e;
  e.positions = eval->target.numel();
  e.accuracy = static_cast<double>(hits.item<int64_t>()) / static_cast<double>(e.positions);
  e.loss = loss.item<double>() / static_cast<double>(e.positions);
  return e;
}

void RecordEvaluation(const Evaluation& e, const SampleSpec& spec, TrialContext& ctx) {
  if (e.positions == 0) return;
  ctx.metric("accuracy", e.accuracy);
  ctx.metric("val_loss", e.loss);
  if (spec.tokens()) ctx.metric("perplexity", std::exp(e.loss));
}

}  // namespace runx::engine
