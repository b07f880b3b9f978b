#pragma once
// Finding and loading technique plugins (shared libraries, through Boost.DLL).
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "plugins/dirs.h"
#include "runx/plugin.h"

namespace runx::plugins {

/// A plugin library that cannot be used; the message names the file and both sides of a mismatch.
class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LoadedPlugin {
  std::string path;
  const PluginDescriptor* descriptor = nullptr;  ///< owned by the library, which is never unloaded
};

/// Loads one library and checks, in order: entry present, API version, LibTorch version, name.
/// The library stays loaded for the life of the process (nothing a plugin made may outlive it).
LoadedPlugin LoadPlugin(const std::string& path);

/// All plugins found in `dirs` (lib*.so / lib*.dylib), first one of a name wins. Libraries that
/// fail to load are reported in errors(), not thrown: one broken plugin must not stop runx.
class Registry {
 public:
  static Registry Discover(const std::vector<std::string>& dirs);
  const LoadedPlugin* Find(const std::string& name) const;
  const std::map<std::string, LoadedPlugin>& plugins() const { return plugins_; }
  const std::vector<std::string>& errors() const { return errors_; }
  /// Creates and configures the technique `name` with `params`; throws PluginError if unknown.
  std::unique_ptr<Technique> Create(const std::string& name, const nlohmann::json& params) const;

 private:
  std::map<std::string, LoadedPlugin> plugins_;
  std::vector<std::string> errors_;
};

}  // namespace runx::plugins
