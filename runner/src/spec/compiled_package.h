#pragma once
// compiled_step's `package: auto`: the compiled training step a trial needs, named by a cache key
// and kept beside the results store (DIR/compiled/), with the tools/compile_step.py arguments that
// make it. The key is what the package is compiled for: the model and its settings, the batch,
// one sample's shape, the number of classes, the precision compiled in, the memory format, the
// device kind, and the LibTorch release that loads it (AOTInductor's ABI is per release; the
// Python side's Triton is pinned by its torch release and recorded in the package's sidecar).
// Two trials that would compile the same step share one package; a change to any of those makes
// another. No LibTorch here: the release is the caller's.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace runx::spec {

/// The package `package: auto` stands for in one trial.
struct CompiledPackage {
  std::string path;               ///< DIR/<model>-b<batch>-<dtype>[-cl]-<key>.pt2 ("" when `reason` is set)
  std::string key;                ///< 16 hex digits of sha256 over `facts`
  nlohmann::json facts;           ///< what the key covers, as JSON (recorded with the trial)
  std::vector<std::string> args;  ///< tools/compile_step.py's arguments, without the script and -o
  std::string reason;             ///< why runx cannot name this trial's package ("" when it can)
};

/// Whether `config` (a trial config) runs compiled_step with `package: auto`.
bool WantsAutoPackage(const nlohmann::json& config);

/// The package of `config` (a trial config; see UsedConfig) in `dir`, for LibTorch `torch_release`
/// (major.minor.patch). compile_step.py makes runx's resnet18 and resnet50 (images [3, H, H],
/// stated in data.shape) and gpt (byte tokens of text data, dropout 0, data.seq_len stated) by
/// name, and a python model (spec/python_model.h) from its builder, keyed by the source's content
/// (data.shape and the number of classes stated). Sets `reason` instead of a path for what it
/// cannot make by itself: another model (make that package with --module and name its file in
/// `package`), another image or vocabulary, fp16, a batch size that is not a number.
CompiledPackage AutoPackage(const nlohmann::json& config, const std::string& dir, const std::string& torch_release);

/// Whether the package at `path` is there whole: the package and its sidecar (path + ".json"),
/// which runx compile moves into place last.
bool PackagePresent(const std::string& path);

/// `config` with compiled_step's `package` set to `path`.
void SetPackage(nlohmann::json* config, const std::string& path);

/// Where `package: auto` keeps packages for the results store at `db`: the folder `compiled`
/// beside it (results/runx.db -> results/compiled).
std::string CompiledDirFor(const std::string& db);

/// The command that makes `p`: python3 SCRIPT ARGS -o PATH, where `script` is compile_step.py
/// (runx passes the one it ships: ToolPath in version.h).
std::string CompileCommand(const CompiledPackage& p, const std::string& script = "tools/compile_step.py");

}  // namespace runx::spec
