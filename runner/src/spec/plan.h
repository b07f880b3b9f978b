#pragma once
// The trials an experiment expands to: their configs (shared per variant), labels, order and
// shard. No LibTorch here.
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace runx::spec {

/// How a sweep's axes combine into variants (`sweep.mode`); kSingle: no sweep, one variant.
enum class SweepMode { kSingle, kGrid, kAblation, kAllSubsets };
/// The order trials run in (`order`).
enum class TrialOrder { kInterleaved, kShuffled, kSequential };

/// "single", "grid", "ablation", "all_subsets"; "interleaved", "shuffled", "sequential".
std::string Name(SweepMode mode);
std::string Name(TrialOrder order);
/// The inverse of Name; the schema lets no other word through (anything else: the default).
SweepMode ParseSweepMode(const std::string& name);
TrialOrder ParseTrialOrder(const std::string& name);

/// A resolved config, shared by all repeats of a variant: a plan holds one config per variant,
/// not one per trial. Reads like the `const nlohmann::json` it holds (it converts to one, and
/// forwards value, dump, contains, at, [] and ==), so `t.config.value("device", "auto")` and
/// `RunTrial(t.config, ...)` compile unchanged.
class SharedConfig {
 public:
  SharedConfig() : json_(std::make_shared<const nlohmann::json>()) {}
  explicit SharedConfig(nlohmann::json config) : json_(std::make_shared<const nlohmann::json>(std::move(config))) {}

  const nlohmann::json& get() const { return *json_; }
  operator const nlohmann::json&() const { return *json_; }  // NOLINT: reads as the json it holds
  const nlohmann::json& operator*() const { return *json_; }
  const nlohmann::json* operator->() const { return json_.get(); }

  template <typename... Args>
  decltype(auto) value(Args&&... args) const {
    return json_->value(std::forward<Args>(args)...);
  }
  template <typename... Args>
  std::string dump(Args&&... args) const {
    return json_->dump(std::forward<Args>(args)...);
  }
  template <typename Key>
  bool contains(Key&& key) const {
    return json_->contains(std::forward<Key>(key));
  }
  template <typename Key>
  const nlohmann::json& at(Key&& key) const {
    return json_->at(std::forward<Key>(key));
  }
  template <typename Key>
  const nlohmann::json& operator[](Key&& key) const {
    return (*json_)[std::forward<Key>(key)];
  }

  /// True when both hold the same object (not merely equal configs).
  bool SharedWith(const SharedConfig& other) const { return json_ == other.json_; }

  friend bool operator==(const SharedConfig& a, const SharedConfig& b) { return *a.json_ == *b.json_; }
  friend bool operator!=(const SharedConfig& a, const SharedConfig& b) { return !(a == b); }
  friend bool operator==(const SharedConfig& a, const nlohmann::json& b) { return *a.json_ == b; }
  friend std::ostream& operator<<(std::ostream& out, const SharedConfig& c) { return out << *c.json_; }

 private:
  std::shared_ptr<const nlohmann::json> json_;
};

/// One run of one variant.
struct PlannedTrial {
  /// The resolved config of the variant: the experiment's config with the axis values applied,
  /// without `sweep`, `repeats`, `order`, `order_seed` and `trial_timeout_s` (they say how trials
  /// run, not what a trial is, so changing them keeps the hash and lets a sweep resume). Shared
  /// by the variant's repeats.
  SharedConfig config;
  std::string config_hash;  ///< Sha256Hex(config.dump())
  std::string label;        ///< unique within the plan: "baseline", "bf16+channels_last", "batch_size=128"
  bool is_baseline = false;
  int variant_index = 0;  ///< 0 is the baseline
  int repeat_index = 0;   ///< 0 .. repeats-1
  int order_index = 0;    ///< position in the execution order of the whole (unsharded) plan
  std::string differs;    ///< "precision=bf16, +channels_last"; "" for the baseline
};

struct Plan {
  std::vector<PlannedTrial> trials;  ///< in execution order
  int variants = 1, repeats = 1;
  std::string mode = "single";        ///< Name(sweep_mode), for the store and messages
  std::string order = "interleaved";  ///< Name(trial_order)
  SweepMode sweep_mode = SweepMode::kSingle;
  TrialOrder trial_order = TrialOrder::kInterleaved;
  uint64_t order_seed = 0;  ///< the seed of the shuffled order (given, or derived from `seed`)
  double trial_timeout_s = 3600;
  int shard_index = 0, shard_count = 1;  ///< set by Shard
};

/// Most variants a sweep may expand to (a larger one is an error at 'sweep.axes').
inline constexpr size_t kMaxVariants = 4096;
/// Most trials (variants x repeats) a plan may hold (a larger one is an error at 'repeats', or
/// at 'sweep.axes' when 'repeats' is not written). At a second a trial, a day and more of runs;
/// expanded, a few tens of MB.
inline constexpr size_t kMaxTrials = 100000;

}  // namespace runx::spec
