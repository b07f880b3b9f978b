#pragma once
// Internal: `--set key=value` applied to a document before it is validated.
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/source_map.h"
#include "spec/spec.h"

namespace runx::spec {

/// "data.batch_size" -> {"data", "batch_size"}.
std::vector<std::string> SplitDots(const std::string& key);

/// The name diagnostics about override `text` carry as their file: "--set data.batch_size=-1".
std::string OverrideFile(const std::string& text);

/// Applies each override to the mapping `doc` in order (creating intermediate mappings) and
/// records in `origins` that the values come from it. Returns the overrides that could not be
/// applied (no '=', empty key, unparsable value, a path through a non-mapping).
std::vector<Diagnostic> ApplyOverrides(const std::vector<Override>& overrides, nlohmann::json* doc, SourceMap* origins);

}  // namespace runx::spec
