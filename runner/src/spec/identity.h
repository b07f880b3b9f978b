#pragma once
// What a trial is, as opposed to how it is run or where its results go: the resolved config
// reduced to the keys the trial uses, and the content of every input file it reads by path.
// No LibTorch here; the environment half of a trial's identity is the engine's (worker/identity.h).
#include <string>

#include <nlohmann/json.hpp>

#include "base/sha256.h"

namespace runx::spec {

/// The keys of `config` (a resolved trial config) that the trial uses: without the experiment's
/// name, description, results path and scheduling keys (repeats, order, order_seed,
/// trial_timeout_s, sweep), without the section of the other task (train or infer), and without
/// model and data keys that the chosen model or data source ignores (its entry in spec/catalogue.h:
/// a synthetic-data trial keeps no Fashion-MNIST path, a cnn no mlp widths). Techniques the
/// precision or batch size imply (amp for fp16/bf16, auto_batch for batch_size auto) are made
/// explicit.
nlohmann::json UsedConfig(const nlohmann::json& config);

/// The techniques `config` turns on, in the order listed, technique name -> parameters: its
/// `optimizations` plus the ones its settings imply (amp for precision fp16/bf16, auto_batch for
/// data.batch_size auto). The one place that decides which techniques a trial runs.
nlohmann::json ResolvedTechniques(const nlohmann::json& config);

/// The input files `config` reads by path: the input keys of its model's and data source's
/// catalogue entries (spec/catalogue.h: a model file, memmap's arrays, a fashion-mnist folder, the
/// text files of text data as ListTextFiles takes them from a folder) and compiled_step's package
/// and sidecar, as {"<key>": {"path": "<as written>", "sha256": "<hex of the content>"}}. A file
/// that cannot be read gets "sha256": "unreadable: <why>" (the trial then fails with its own message).
nlohmann::json InputFiles(const nlohmann::json& config);

/// The config identity: sha256 of UsedConfig(config) together with its InputFiles; the paths of
/// the input files, and a python model's artifact (model.artifact, made from the source under a
/// key: spec/python_model.h), are left out.
struct ConfigIdentity {
  nlohmann::json used;    ///< UsedConfig(config): what a trial runs with and the store keeps
  nlohmann::json inputs;  ///< InputFiles(config)
  std::string hash;       ///< lower-case hex
};
ConfigIdentity IdentifyConfig(const nlohmann::json& config);

/// sha256 of a file's content, lower-case hex (base/sha256.h).
using base::Sha256OfFile;

}  // namespace runx::spec
