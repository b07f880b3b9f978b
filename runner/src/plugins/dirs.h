#pragma once
// Where technique plugins are looked for. No LibTorch here: the command line and the spec
// loader (which reads each plugin's parameter schema) need the directories, not the plugins.
#include <string>
#include <vector>

namespace runx::plugins {

/// The plugin directories searched, in order: RUNX_PLUGIN_DIR when set, else the installed plugin
/// dir beside the binary (P/lib/runx/plugins for P/bin/runx) when there is one, else the build's;
/// then each entry of RUNX_PLUGIN_PATH (colon-separated).
std::vector<std::string> PluginDirs();

}  // namespace runx::plugins
