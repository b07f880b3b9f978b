#pragma once
// model: {name: python, path: model.py, builder: build, kwargs: {...}}: a model the user builds in
// Python. runx does not run Python in a trial: `runx compile` makes from the builder a TorchScript
// file (tools/compile_step.py --torchscript), the eager artifact the trial trains, kept beside the
// results store (DIR/compiled/) under a key over what it is made from: the source's content, the
// builder and its keyword arguments, one sample's shape, the number of classes and the LibTorch
// release that loads it. The trial is identified by the source's content (spec/identity.cc), so
// an edited model.py is another trial, refused until `runx compile` has made its artifact.
// No LibTorch here: the release is the caller's.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace runx::spec {

/// The builder a python model names: its `builder`, else "build".
std::string PythonBuilder(const nlohmann::json& model);

/// Whether `config` (a trial config) trains a python model.
bool IsPythonModel(const nlohmann::json& config);

/// One sample's shape as the data gives it, without loading the data: synthetic and memmap data's
/// `shape`, fashion-mnist's [1, 28, 28]. Empty when the config does not say (memmap .npy files
/// whose shape is in their header, text).
std::vector<int64_t> StatedSampleShape(const nlohmann::json& data);

/// tools/compile_step.py's arguments that name a python model's builder: --module PATH:BUILDER,
/// and --builder-kwargs JSON when it has keyword arguments.
std::vector<std::string> PythonModuleArgs(const nlohmann::json& model);

/// The TorchScript artifact of a python model, as runx compile makes it.
struct PythonArtifact {
  std::string path;               ///< DIR/<stem>-<builder>-<key>.ts.pt ("" when `reason` is set)
  std::string key;                ///< 16 hex digits of sha256 over `facts`
  nlohmann::json facts;           ///< what the key covers: source sha256, builder, kwargs, shape, classes, release
  std::vector<std::string> args;  ///< tools/compile_step.py's arguments, without the script and --torchscript
  std::string source;             ///< "model.py:build", as messages name it
  std::string reason;             ///< why runx cannot name the artifact ("" when it can)
};

/// The artifact of `config` (a trial config with model.name python) in `dir`, for LibTorch
/// `torch_release` (major.minor.patch). Sets `reason` when the source cannot be read or the sample
/// shape is not stated.
PythonArtifact PythonModelArtifact(const nlohmann::json& config, const std::string& dir,
                                   const std::string& torch_release);

/// Whether the artifact at `path` is there whole: the TorchScript file and its sidecar (path +
/// ".json"), which runx compile moves into place last.
bool ArtifactPresent(const std::string& path);

/// `config` with the python model's resolved artifact (model.artifact), which the trial loads;
/// identified by its content, not by where it lies (spec/identity.cc).
void SetArtifact(nlohmann::json* config, const std::string& path);

/// `args` as one shell command line's words: a word with characters the shell reads (the JSON of
/// --builder-kwargs) in single quotes.
std::string ShellWords(const std::vector<std::string>& args);

/// The command that makes `a`: python3 SCRIPT ARGS --torchscript PATH, where `script` is
/// compile_step.py (runx passes the one it ships: ToolPath in version.h).
std::string TorchScriptCommand(const PythonArtifact& a, const std::string& script = "tools/compile_step.py");

}  // namespace runx::spec
