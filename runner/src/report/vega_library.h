#pragma once
// Vega 5 as Debian ships it (libjs-vega: /usr/share/javascript/vega/, one UMD file per vega-*
// package, no combined vega.js), read at report time and made into one inline <script>: each file
// becomes a module of a small CommonJS loader, and `vega.parse` / `vega.View` are assembled the
// way the combined vega package does it (its transforms registered with the dataflow). The page
// then needs nothing from the network or the disk. docs/report.md says why Vega. No LibTorch.
#include <stdexcept>
#include <string>
#include <vector>

namespace runx::report {

/// The chart library cannot be found or read: the message names the package to install.
class ChartLibraryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where Debian's browser JavaScript is looked for, in order: $RUNX_JAVASCRIPT_DIR when set (a
/// folder holding vega/ and topojson-client/), then <dir>/javascript for each dir of
/// $XDG_DATA_DIRS (the XDG rule: when unset, /usr/local/share:/usr/share; when set, only its
/// dirs, as for every desktop program), then an installed runx's own <prefix>/share/javascript.
std::vector<std::string> JavaScriptDirs();

/// The module files the report needs, as (module name, file under a JavaScript dir; the
/// minified file is preferred and the plain one taken when it is missing).
struct VegaModule {
  std::string name;   ///< what the other modules require(), e.g. "vega-selections"
  std::string file;   ///< e.g. "vega/vega-selection.min.js"
  std::string plain;  ///< the unminified fallback, e.g. "vega/vega-selection.js"
};
const std::vector<VegaModule>& VegaModules();

/// The inline script that defines the global `vega` (parse, View) from the first of `dirs` that
/// holds every module. Throws ChartLibraryError naming the missing file, the folders searched and
/// the Debian package (libjs-vega) when none does, or when a file cannot be read.
std::string LoadVegaScript(const std::vector<std::string>& dirs);

/// `text` made safe inside an HTML <script> element: "</script" and "<!--" cannot end or
/// comment it out ("<\/script", "<\!--": the same text to JavaScript, in strings, regular
/// expressions and templates alike).
std::string EscapeForScript(const std::string& text);

}  // namespace runx::report
