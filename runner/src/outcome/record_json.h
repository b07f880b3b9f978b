#pragma once
// TrialRecord <-> JSON, the wire format between a trial's child process and the parent.
#include <nlohmann/json.hpp>

#include "store/store.h"

namespace runx::engine {

nlohmann::json ToJson(const store::TrialRecord& r);
store::TrialRecord RecordFromJson(const nlohmann::json& j);

}  // namespace runx::engine
