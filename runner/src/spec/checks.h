#pragma once
// Internal: checks beyond the experiment schema: technique names and parameters, and rules
// that involve several keys.
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/issue.h"
#include "spec/source_map.h"
#include "spec/spec.h"

namespace runx::spec {

/// Each name of `optimizations` must be an installed technique; its parameters must match the
/// technique's schema.
std::vector<Issue> CheckTechniques(const json& doc, const SchemaSet& schemas);

/// The note of an "unknown technique" error: the installed techniques, and the closest one.
std::string TechniqueNote(const std::string& name, const SchemaSet& schemas);

/// `train.steps` xor `train.epochs`; synthetic data needs `shape` and `num_classes`, memmap data
/// `path` and `labels` (and `eval_path` with `eval_labels`); keys of one source are refused with
/// another (`labels` with synthetic data, `produce_ms` without `placement: host`).
std::vector<Issue> CheckSemantics(const json& doc, const SourceMap& origins,
                                  const std::vector<Override>& overrides);

}  // namespace runx::spec
