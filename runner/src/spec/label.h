#pragma once
// The one place a trial's label is made: for the variants of a sweep (Expand) and for a config on
// its own (the engine's record of a trial). No LibTorch here.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace runx::spec {

/// What a trial is called, and how it differs from the baseline it is compared with.
struct TrialName {
  std::string label;    ///< "bf16+channels_last+batch_size=128"; "baseline" when nothing differs
  std::string differs;  ///< "precision=bf16, +channels_last, data.batch_size=128"; "" likewise
};

/// The baseline of a sweep and its axes, as labels compare with them.
struct LabelAxes {
  nlohmann::json baseline;              ///< the baseline variant's config (axis values as written)
  std::vector<std::string> axes;        ///< axis keys in the order written: "precision", "data.batch_size"
  std::vector<std::string> techniques;  ///< the techniques of the 'optimizations' axis, in its order
};

/// The label of the trial that runs `config`: the precision when it differs, then each technique
/// switched on ("amp") or off ("no_amp"), then every other axis as `leaf=value` (the leaf is the
/// last key, or the one before a last 'name': 'model.name' -> 'model'; the whole key when two
/// axes share a leaf).
/// Without `sweep` (one trial, e.g. a config alone as `runx trial` gets it) the trial is
/// compared with fp32 and no techniques, and amp under any other precision is left out: it is
/// how fp16 and bf16 run, not a change of its own. This is the label the engine records for a trial
/// run on its own, and the label of an experiment without a sweep.
TrialName LabelTrial(const nlohmann::json& config, const LabelAxes* sweep = nullptr);

}  // namespace runx::spec
