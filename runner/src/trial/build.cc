#include "trial/build.h"

#include <algorithm>

#include "data/shard.h"

namespace runx::engine {

std::unique_ptr<data::DataSource> BuildModelAndData(const spec::TrialConfig& trial, uint64_t seed,
                                                    std::vector<ActiveTechnique>& active, RunnerContext& ctx) {
  const c10::Device device = ctx.device();
  std::unique_ptr<data::DataSource> data;
  if (Collectives* ranks = ctx.collectives()) {
    // Each rank makes the global batch (data.batch_size per rank x ranks) and trains on its shard.
    auto global = trial.data_section;
    global["batch_size"] = trial.data.batch_size * ranks->world_size();
    data = data::ShardSource(data::MakeDataSource(global, device, seed), ranks->rank(), ranks->world_size());
  } else {
    data = data::MakeDataSource(trial.data_section, device, seed);
  }
  ctx.data_ = data.get();
  torch::manual_seed(seed);
  for (const auto& [key, value] : data->Facts()) ctx.record(key, value);
  ctx.model_ = models::BuildModel(trial.model_section, data->sample_spec(), device);
  for (const auto& [key, value] : ctx.model_->Facts()) ctx.record(key, value);
  ctx.model_->to(device);
  ctx.metric("param_count", static_cast<double>(models::ParameterCount(*ctx.model_)));
  ForEachTechnique(active, "on_model", [&](Technique& t) { t.on_model(*ctx.model_, ctx); });
  return data;
}

std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const spec::OptimizerConfig& opt, torch::nn::Module& model) {
  if (opt.adamw()) {
    auto o = torch::optim::AdamWOptions(opt.lr).weight_decay(opt.weight_decay);
    if (opt.betas) o.betas({(*opt.betas)[0], (*opt.betas)[1]});
    if (opt.eps) o.eps(*opt.eps);
    return std::make_unique<torch::optim::AdamW>(model.parameters(), o);
  }
  auto o =
      torch::optim::SGDOptions(opt.lr).momentum(opt.momentum).nesterov(opt.nesterov).weight_decay(opt.weight_decay);
  return std::make_unique<torch::optim::SGD>(model.parameters(), o);
}

torch::Tensor CrossEntropy(const torch::Tensor& logits, const torch::Tensor& target,
                           at::Reduction::Reduction reduction) {
  const auto flat = logits.dim() > 2 ? logits.flatten(0, -2) : logits;
  return at::cross_entropy_loss(flat, target.flatten(), /*weight=*/{}, reduction);
}

Step BaseStep(models::Model& model, torch::optim::Optimizer* optimizer) {
  Step step;
  auto* m = &model;
  if (!optimizer) {
    step.forward = [m](Batch& b) { return m->forward(b.input); };
    step.backward = [](torch::Tensor&) {};
    step.update = [] {};
    return step;
  }
  step.forward = [m](Batch& b) { return CrossEntropy(m->forward(b.input), b.target); };
  step.backward = [](torch::Tensor& loss) { loss.backward(); };
  step.update = [optimizer] {
    optimizer->step();
    for (auto& group : optimizer->param_groups())
      for (auto& p : group.params()) p.mutable_grad() = torch::Tensor();  // set_to_none
  };
  return step;
}

Step WrapStep(Step step, std::vector<ActiveTechnique>& active, TrialContext& ctx) {
  std::vector<ActiveTechnique*> by_order;
  for (auto& a : active) by_order.push_back(&a);
  std::stable_sort(by_order.begin(), by_order.end(), [](ActiveTechnique* a, ActiveTechnique* b) {
    return a->technique->wrap_order() < b->technique->wrap_order();
  });
  for (auto* a : by_order) {
    try {
      step = a->technique->wrap_step(std::move(step), ctx);
    } catch (const std::exception& e) {
      throw TechniqueFailure(fmt::format("technique '{}' failed in wrap_step: {}", a->name, e.what()));
    }
  }
  return step;
}

}  // namespace runx::engine
