#pragma once
// Helpers shared by the spec tests.
#include <chrono>
#include <string>
#include <vector>

#include "spec/spec.h"
#include "spec/sweep.h"

namespace runx::spec::test {

inline const std::string kData = RUNX_SPEC_TEST_DATA;

/// The experiment schema plus the test copies of the amp and channels_last parameter schemas.
inline const SchemaSet& Schemas() {
  static const SchemaSet schemas = SchemaSet::Load({kData + "/plugins"});
  return schemas;
}

inline std::vector<Override> Sets(const std::vector<std::string>& texts) {
  std::vector<Override> out;
  for (const auto& t : texts) out.push_back({t});
  return out;
}

/// Every diagnostic of data/<name>, rendered, with the data directory cut from the paths.
inline std::string RenderFile(const std::string& name, const std::vector<std::string>& sets = {}) {
  std::string out;
  for (const auto& d : Validate(kData + "/" + name, Sets(sets), Schemas())) out += d.Render();
  for (size_t at; (at = out.find(kData + "/")) != std::string::npos;) out.erase(at, kData.size() + 1);
  return out;
}

inline std::string RenderText(const std::string& text, const std::vector<std::string>& sets = {}) {
  std::string out;
  for (const auto& d : ValidateText("x.yaml", text, Sets(sets), Schemas())) out += d.Render();
  return out;
}

/// The first lines of the sweep tests' experiments (lines 1-4; a test's own lines start at 5).
inline const std::string kBase =
    "name: s\n"
    "device: cpu\n"
    "model: {name: mlp}\n"
    "data: {source: synthetic, shape: [8], num_classes: 2, batch_size: 4}\n";

/// The plan of kBase + `yaml`.
inline Plan PlanOf(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  return Expand(LoadText("x.yaml", kBase + yaml, Sets(sets), Schemas()), Schemas());
}

/// The labels of the variants, in variant order.
inline std::vector<std::string> Labels(const Plan& plan) {
  std::vector<std::string> out(static_cast<size_t>(plan.variants));
  for (const auto& t : plan.trials) out[static_cast<size_t>(t.variant_index)] = t.label;
  return out;
}

/// The variant index of each trial, in execution order.
inline std::vector<int> Sequence(const Plan& plan) {
  std::vector<int> out;
  for (const auto& t : plan.trials) out.push_back(t.variant_index);
  return out;
}

/// Seconds taken by `f`.
template <typename F>
double Seconds(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace runx::spec::test
