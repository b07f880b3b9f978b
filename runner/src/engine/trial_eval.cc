#include "engine/trial_eval.h"

#include <algorithm>
#include <cmath>

namespace runx::engine {

double Accuracy(models::Model& model, data::DataSource& data, std::vector<ActiveTechnique>& active,
                TrialContext& ctx, const std::function<torch::Tensor(Batch&)>& forward) {
  auto eval = data.EvalSet();
  if (!eval) return std::nan("");
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  const int64_t n = eval->input.size(0), chunk = 1000;
  torch::Tensor hits = torch::zeros({}, torch::TensorOptions().device(eval->input.device()).dtype(torch::kLong));
  for (int64_t i = 0; i < n; i += chunk) {
    const int64_t len = std::min(chunk, n - i);
    Batch b{eval->input.narrow(0, i, len), eval->target.narrow(0, i, len)};
    ForEachTechnique(active, "on_batch", [&](Technique& t) { t.on_batch(b, ctx); });
    hits += forward(b).argmax(1).eq(b.target).sum();
  }
  const int64_t correct = hits.item<int64_t>();
  model.train(was_training);
  return static_cast<double>(correct) / static_cast<double>(n);
}

}  // namespace runx::engine
