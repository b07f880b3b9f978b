#include "spec/plan_text.h"

#include <algorithm>

#include <fmt/format.h>

namespace runx::spec {

std::string RenderPlan(const Plan& plan) {
  const auto plural = [](size_t n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); };
  std::string out = fmt::format(
      "{}: {} x {} = {}\n",
      plan.sweep_mode == SweepMode::kSingle ? std::string("no sweep") : Name(plan.sweep_mode) + " sweep",
      plural(static_cast<size_t>(plan.variants), "variant"), plural(static_cast<size_t>(plan.repeats), "repeat"),
      plural(static_cast<size_t>(plan.variants) * static_cast<size_t>(plan.repeats), "trial"));
  if (plan.shard_count > 1)
    out += fmt::format("shard {}/{}: {} of the {} trials\n", plan.shard_index, plan.shard_count, plan.trials.size(),
                       static_cast<size_t>(plan.variants) * static_cast<size_t>(plan.repeats));

  struct Row {
    int index;
    std::string label, differs;
    int trials = 0;
  };
  std::vector<Row> rows;
  for (const auto& t : plan.trials) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.index == t.variant_index; });
    if (it == rows.end()) {
      rows.push_back({t.variant_index, t.label, t.is_baseline ? "(baseline)" : t.differs, 0});
      it = rows.end() - 1;
    }
    ++it->trials;
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.index < b.index; });
  size_t w_index = 1, w_label = 5, w_differs = 7;
  for (const auto& r : rows) {
    w_index = std::max(w_index, std::to_string(r.index).size());
    w_label = std::max(w_label, r.label.size());
    w_differs = std::max(w_differs, r.differs.size());
  }
  out +=
      fmt::format("\n  {:>{}}  {:<{}}  {:<{}}  {}\n", "#", w_index, "label", w_label, "differs", w_differs, "trials");
  for (const auto& r : rows)
    out += fmt::format("  {:>{}}  {:<{}}  {:<{}}  {:>6}\n", r.index, w_index, r.label, w_label, r.differs, w_differs,
                       r.trials);

  constexpr size_t kMaxShown = 64;
  std::string sequence;
  for (size_t i = 0; i < plan.trials.size() && i < kMaxShown; ++i) {
    const auto& t = plan.trials[i];
    if (i > 0) {
      const auto& prev = plan.trials[i - 1];
      const bool next_group = plan.trial_order == TrialOrder::kSequential ? t.variant_index != prev.variant_index
                                                                          : t.repeat_index != prev.repeat_index;
      sequence += next_group ? " | " : " ";
    }
    sequence += std::to_string(t.variant_index);
  }
  if (plan.trials.size() > kMaxShown) sequence += fmt::format(" ... ({} more)", plan.trials.size() - kMaxShown);
  std::string how = Name(plan.trial_order);
  if (plan.trial_order == TrialOrder::kShuffled) how += fmt::format(" (seed {})", plan.order_seed);
  out += fmt::format("\norder: {}: {}\n", how, sequence.empty() ? "(no trials)" : sequence);
  out += fmt::format("timeout: {} s per trial\n", plan.trial_timeout_s);
  return out;
}

}  // namespace runx::spec
