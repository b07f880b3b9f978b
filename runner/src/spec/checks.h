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

/// `train.steps` xor `train.epochs`; for the model and the data (spec/catalogue.h): the keys their
/// entry requires, keys of another entry that it refuses, a model that reads other samples than the
/// data gives, and the entry's own check; input files that are no regular files; the section of
/// the other task.
std::vector<Issue> CheckSemantics(const json& doc, const SourceMap& origins, const std::vector<Override>& overrides);

/// The catalogue's checks of its entries, on the whole document; CheckSemantics calls each when
/// the document's model or data names its entry:
/// synthetic data: `produce_ms` only with `placement: host`.
std::vector<Issue> CheckSyntheticData(const json& doc);
/// memmap data: `eval_path` with `eval_labels`.
std::vector<Issue> CheckMemmapData(const json& doc);
/// Text data (text_checks.cc): the path a readable text file or a folder with text files, and
/// seq_len short enough for the training and validation splits where the text's size is known
/// without reading it (plain files; exact for tokenizer bytes, an upper bound for chars; the data
/// source checks the exact count when it reads the text).
std::vector<Issue> CheckTextData(const json& doc);
/// Model gpt (text_checks.cc): it takes no num_classes (its vocabulary is the text's), its d_model
/// is a multiple of n_head, its block_size at least data.seq_len.
std::vector<Issue> CheckGpt(const json& doc);
/// Model aoti: an AOTInductor package runs with `task: infer` only.
std::vector<Issue> CheckAoti(const json& doc);

}  // namespace runx::spec
