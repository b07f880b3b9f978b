#include "plugins/dirs.h"

#include <cstdlib>
#include <sstream>

#include "base/install_dirs.h"

namespace runx::plugins {

std::vector<std::string> PluginDirs() {
  std::vector<std::string> dirs;
  const char* own = std::getenv("RUNX_PLUGIN_DIR");
  if (own && *own) {
    dirs.push_back(own);
  } else {
    // An installed runx (P/bin/runx) has P/lib/runx/plugins; one in the build tree has none there.
    const std::string installed = base::DirBesideExecutable(RUNX_INSTALL_PLUGIN_DIR_FROM_BIN);
    dirs.push_back(installed.empty() ? RUNX_DEFAULT_PLUGIN_DIR : installed);
  }
  if (const char* extra = std::getenv("RUNX_PLUGIN_PATH")) {
    std::stringstream ss(extra);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.push_back(d);
  }
  return dirs;
}

}  // namespace runx::plugins
