#include "trial/build.h"

#include <algorithm>

#include "data/shard.h"

namespace runx::engine {

std::unique_ptr<data::DataSource> BuildModelAndData(const nlohmann::json& config, uint64_t seed,
                                                    std::vector<ActiveTechnique>& active, RunnerContext& ctx) {
  const c10::Device device = ctx.device();
  std::unique_ptr<data::DataSource> data;
  if (Collectives* ranks = ctx.collectives()) {
    // Each rank makes the global batch (data.batch_size per rank x ranks) and trains on its shard.
    auto global = config.at("data");
    global["batch_size"] = global.at("batch_size").get<int64_t>() * ranks->world_size();
    data = data::ShardSource(data::MakeDataSource(global, device, seed), ranks->rank(), ranks->world_size());
  } else {
    data = data::MakeDataSource(config.at("data"), device, seed);
  }
  ctx.data_ = data.get();
  torch::manual_seed(seed);
  for (const auto& [key, value] : data->Facts()) ctx.record(key, value);
  ctx.model_ = models::BuildModel(config.at("model"), data->sample_spec(), device);
  for (const auto& [key, value] : ctx.model_->Facts()) ctx.record(key, value);
  ctx.model_->to(device);
  ctx.metric("param_count", static_cast<double>(models::ParameterCount(*ctx.model_)));
  ForEachTechnique(active, "on_model", [&](Technique& t) { t.on_model(*ctx.model_, ctx); });
  return data;
}

std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const nlohmann::json& config, torch::nn::Module& model) {
  const auto opt = config.value("train", nlohmann::json::object()).value("optimizer", nlohmann::json{{"name", "sgd"}});
  const std::string name = opt.value("name", "sgd");
  if (name == "adamw") {
    auto o = torch::optim::AdamWOptions(opt.value("lr", 1e-3)).weight_decay(opt.value("weight_decay", 1e-2));
    if (opt.contains("betas")) o.betas({opt["betas"][0].get<double>(), opt["betas"][1].get<double>()});
    if (opt.contains("eps")) o.eps(opt["eps"].get<double>());
    return std::make_unique<torch::optim::AdamW>(model.parameters(), o);
  }
  auto o = torch::optim::SGDOptions(opt.value("lr", 0.1))
               .momentum(opt.value("momentum", 0.9))
               .nesterov(opt.value("nesterov", false))
               .weight_decay(opt.value("weight_decay", 0.0));
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
