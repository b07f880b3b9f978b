#pragma once
// Loading, validating and resolving experiment files. No LibTorch here.
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "base/spelling.h"
#include "spec/source_map.h"

namespace runx::spec {

/// One problem found in a user's input, rendered like a compiler error:
///   experiments/x.yaml:14:15: error: unknown model 'resnt50'
///      14 |   name: resnt50
///         |         ^
///   note: expected one of 'mlp', 'cnn', 'resnet18', 'resnet50'; did you mean 'resnet50'?
struct Diagnostic {
  std::string file;                ///< path as the user gave it, or "--set" for command-line overrides
  int line = 0;                    ///< 1-based; 0 when the problem has no position (e.g. unreadable file)
  int column = 0;                  ///< 1-based
  std::string message;             ///< lower case start, no final period, user values quoted
  std::string source_line;         ///< the text of `line`, without newline; empty when unknown
  std::vector<std::string> notes;  ///< "expected ...", "did you mean '...'?", hints
  std::string Render() const;
};

/// Thrown by Load when the input is not a valid experiment; carries every problem found.
class SpecError : public std::runtime_error {
 public:
  /// `path` names the file in the count line ("2 errors in <path>"); by default the first
  /// diagnostic's file that is not an override.
  explicit SpecError(std::vector<Diagnostic> diagnostics, std::string path = "");
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  const std::string& path() const { return path_; }
  std::string Render() const;  ///< all diagnostics, one after another, followed by a count line

 private:
  std::vector<Diagnostic> diagnostics_;
  std::string path_;
};

/// The schemas an experiment is checked against: the experiment schema (embedded from
/// schemas/experiment.schema.json at build time) plus one parameter schema per technique
/// (found as <name>.schema.json beside each plugin library).
struct SchemaSet {
  nlohmann::json experiment;
  std::map<std::string, nlohmann::json> techniques;  ///< technique name -> parameter schema
  std::vector<std::string> plugin_dirs;              ///< where techniques were looked for (named in errors)
  /// Schema files that could not be used ("<file>: <why>"); their technique is left out, so an
  /// experiment naming it gets "unknown technique". Callers may print these as warnings.
  std::vector<std::string> errors;

  /// The embedded experiment schema plus every `*.schema.json` found in `plugin_dirs`; a name
  /// found in several directories is taken from the first.
  static SchemaSet Load(const std::vector<std::string>& plugin_dirs);
};

/// A `--set key=value` override; the value is parsed as a YAML scalar/flow node (so `128` is an
/// integer, `[1, 2]` a list, `true` a boolean) and checked by the schema like the file itself.
struct Override {
  std::string text;  ///< as given: "data.batch_size=128"
};

/// A validated, fully resolved experiment.
struct Experiment {
  std::string path;  ///< as given
  std::string text;  ///< the YAML source
  std::string text_sha256;
  nlohmann::json config;    ///< schema defaults filled in, overrides applied
  std::string config_hash;  ///< sha256 (hex) of config.dump()
  /// The keys of `sweep.axes` in the order written (labels follow it); empty without a sweep.
  std::vector<std::string> sweep_axes;
  /// Where each value of `config` came from (JSON pointer -> line and column in `text`, or the
  /// override that set it), as checked: optimizations as a mapping, sweep axes as dotted keys.
  /// Values filled in from defaults have none (their nearest ancestor's is used). Later errors
  /// (Expand's) are located with it, without reading `text` again.
  SourceMap origins;
  std::vector<Override> overrides;  ///< as given to Load; `origins` refers to them by index
};

/// Parses, validates and resolves `path` with `overrides`. Throws SpecError with every problem
/// found (never crashes or hangs on hostile input: deep nesting, alias bombs, huge files).
Experiment Load(const std::string& path, const std::vector<Override>& overrides, const SchemaSet& schemas);

/// Like Load, but returns the problems instead of throwing (empty when valid).
std::vector<Diagnostic> Validate(const std::string& path, const std::vector<Override>& overrides,
                                 const SchemaSet& schemas);

/// Load and Validate on text already in memory (stdin, tests); `path` names it in messages.
Experiment LoadText(const std::string& path, const std::string& text, const std::vector<Override>& overrides,
                    const SchemaSet& schemas);
std::vector<Diagnostic> ValidateText(const std::string& path, const std::string& text,
                                     const std::vector<Override>& overrides, const SchemaSet& schemas);

/// Limits that keep hostile input cheap; every one gives a clear error when exceeded.
inline constexpr size_t kMaxFileBytes = 1 << 20;  ///< experiment files are a few KiB
inline constexpr size_t kMaxNodes = 100000;       ///< after expanding YAML aliases
inline constexpr size_t kMaxDepth = 64;           ///< nested mappings and lists
inline constexpr size_t kMaxValueBytes = 4096;    ///< one scalar or key
inline constexpr size_t kMaxDiagnostics = 50;     ///< per file; then "N more errors not shown"

/// sha256 of `data`, lower-case hex (base/sha256.h).
using base::Sha256Hex;

/// The closest of `candidates` to `word`, or "" (base/spelling.h).
using base::DidYouMean;

}  // namespace runx::spec
