// Expand: an experiment's variants, scheduled.
#include <algorithm>

#include "spec/locate.h"
#include "spec/sweep.h"
#include "spec/sweep_block.h"
#include "spec/sweep_check.h"
#include "spec/variants.h"

namespace runx::spec {
namespace {

/// Issues found by Expand, located by the experiment's source map (the file is not read again).
SpecError ErrorOf(const Experiment& exp, std::vector<Issue> issues) {
  const Source source(exp.path, exp.text);
  std::vector<Diagnostic> diags;
  for (auto& i : issues) diags.push_back(FromIssue(source, exp.origins, exp.overrides, std::move(i)));
  source.AddSourceLines(&diags);
  return SpecError(std::move(diags), exp.path);
}

template <typename T>
T Get(const json& config, const char* key, T fallback) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace

Plan Expand(const Experiment& exp, const SchemaSet& schemas) {
  const json& config = exp.config;
  Plan plan;
  plan.repeats = std::max(1, Get<int>(config, "repeats", 1));
  plan.trial_order = ParseTrialOrder(Get<std::string>(config, "order", "interleaved"));
  plan.order = Name(plan.trial_order);
  plan.order_seed =
      config.contains("order_seed") ? Get<uint64_t>(config, "order_seed", 0) : Get<uint64_t>(config, "seed", 0);
  plan.trial_timeout_s = Get<double>(config, "trial_timeout_s", 3600);

  std::vector<Variant> variants;
  if (!config.contains("sweep")) {
    variants.push_back(SingleVariant(config));
  } else {
    std::vector<std::string> order = exp.sweep_axes;
    const json axes = config["sweep"].value("axes", json::object());
    for (const auto& [key, values] : axes.items())
      if (std::find(order.begin(), order.end(), key) == order.end()) order.push_back(key);
    std::vector<Issue> issues;
    const Sweep sweep = ReadSweep(config, schemas, order, &issues);
    if (issues.empty()) issues = CheckSize(CountVariants(sweep), plan.repeats, exp.origins.Find("/repeats") != nullptr);
    if (!issues.empty()) throw ErrorOf(exp, std::move(issues));
    plan.sweep_mode = sweep.mode;
    variants = BuildVariants(config, sweep, schemas, true);
  }
  plan.mode = Name(plan.sweep_mode);
  plan.variants = static_cast<int>(variants.size());

  std::vector<SharedConfig> configs;
  std::vector<std::string> hashes;
  for (auto& v : variants) {
    hashes.push_back(Sha256Hex(v.config.dump()));
    configs.emplace_back(std::move(v.config));
  }
  const auto sequence = Schedule(plan.trial_order, plan.variants, plan.repeats, plan.order_seed);
  plan.trials.reserve(sequence.size());
  for (const auto& [v, r] : sequence) {
    const size_t i = static_cast<size_t>(v);
    PlannedTrial t;
    t.config = configs[i];
    t.config_hash = hashes[i];
    t.label = variants[i].name.label;
    t.differs = variants[i].name.differs;
    t.is_baseline = v == 0;
    t.variant_index = v;
    t.repeat_index = r;
    t.order_index = static_cast<int>(plan.trials.size());
    plan.trials.push_back(std::move(t));
  }
  return plan;
}

}  // namespace runx::spec
