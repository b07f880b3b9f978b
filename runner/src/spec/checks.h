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
/// `path` and `labels` (and `eval_path` with `eval_labels`), text data CheckTextData's; keys of one
/// source are refused with another (`labels` with synthetic data, `produce_ms` without
/// `placement: host`); CheckModelData.
std::vector<Issue> CheckSemantics(const json& doc, const SourceMap& origins,
                                  const std::vector<Override>& overrides);

/// Text data (text_checks.cc): `path` and `seq_len` given, the path a readable text file or a
/// folder with text files, and seq_len short enough for the training and validation splits where
/// the text's size is known without reading it (plain files; exact for tokenizer bytes, an upper
/// bound for chars; the data source checks the exact count when it reads the text).
std::vector<Issue> CheckTextData(const json& data);

/// Which models read which data: gpt reads token ids (text data) and nothing else does; gpt's
/// d_model is a multiple of n_head, its block_size at least data.seq_len, and it takes no
/// num_classes (its vocabulary is the text's).
std::vector<Issue> CheckModelData(const json& doc);

}  // namespace runx::spec
