#include "report/vega_library.h"

#include "base/files.h"
#include "base/install_dirs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace runx::report {
namespace {

namespace fs = std::filesystem;

// A small CommonJS loader: every module is a factory run on its first require(), so the order
// of the files does not matter. The UMD files take their CommonJS branch (module and exports
// are defined), so none of them touches the global `vega`, which each would otherwise replace.
constexpr const char* kLoader = R"js(var runxVegaModules = {};
function runxDefine(name, factory) { runxVegaModules[name] = {factory: factory, module: null}; }
function runxRequire(name) {
  var m = runxVegaModules[name];
  if (!m) throw new Error("runx report: the chart library has no module '" + name + "'");
  if (!m.module) {
    m.module = {exports: {}};
    m.factory.call(window, m.module, m.module.exports, runxRequire);
  }
  return m.module.exports;
}
)js";

// What the combined `vega` package does on load: register the transforms with the dataflow.
constexpr const char* kAssemble = R"js(var vega = (function () {
  var util = runxRequire('vega-util'), dataflow = runxRequire('vega-dataflow');
  util.extend(dataflow.transforms, runxRequire('vega-transforms'), runxRequire('vega-view-transforms'),
              runxRequire('vega-encode'));
  return {parse: runxRequire('vega-parser').parse, View: runxRequire('vega-view').View,
          version: 'libjs-vega'};
})();
)js";

std::string ReadLibraryFile(const fs::path& path) {
  auto text = base::ReadFile(path.string());
  if (!text) throw ChartLibraryError(fmt::format("cannot read '{}' (Debian package libjs-vega)", path.string()));
  return std::move(*text);
}

// The file's text without source map comments (the page has no .map beside it).
std::string WithoutSourceMap(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("//# sourceMappingURL=", 0) == 0) continue;
    out += line;
    out += '\n';
  }
  return out;
}

// The path of `m` under `dir` (minified first), or "" when neither file is there.
fs::path Find(const fs::path& dir, const VegaModule& m) {
  for (const std::string& f : {m.file, m.plain}) {
    std::error_code ec;
    if (!f.empty() && fs::is_regular_file(dir / f, ec)) return dir / f;
  }
  return {};
}

}  // namespace

std::vector<std::string> JavaScriptDirs() {
  std::vector<std::string> dirs;
  if (const char* own = std::getenv("RUNX_JAVASCRIPT_DIR"); own && *own) dirs.emplace_back(own);
  const char* xdg = std::getenv("XDG_DATA_DIRS");
  std::string data = xdg && *xdg ? xdg : "/usr/local/share:/usr/share";
  std::istringstream in(data);
  std::string dir;
  while (std::getline(in, dir, ':')) {
    if (dir.empty()) continue;
    const std::string js = (fs::path(dir) / "javascript").string();
    if (std::find(dirs.begin(), dirs.end(), js) == dirs.end()) dirs.push_back(js);
  }
  // An installed runx also reads its own prefix's share/javascript.
  const std::string own_prefix = base::DirBesideExecutable(RUNX_INSTALL_JAVASCRIPT_DIR_FROM_BIN);
  if (!own_prefix.empty() && std::find(dirs.begin(), dirs.end(), own_prefix) == dirs.end()) dirs.push_back(own_prefix);
  return dirs;
}

const std::vector<VegaModule>& VegaModules() {
  static const std::vector<VegaModule> kModules = [] {
    std::vector<VegaModule> m;
    const auto vega = [&](const std::string& name, const std::string& stem) {
      m.push_back({name, "vega/" + stem + ".min.js", "vega/" + stem + ".js"});
    };
    for (const char* name :
         {"vega-util", "vega-time", "vega-format", "vega-dataflow", "vega-scale", "vega-scenegraph", "vega-expression",
          "vega-statistics", "vega-functions", "vega-runtime", "vega-view", "vega-event-selector", "vega-parser",
          "vega-encode", "vega-transforms", "vega-view-transforms"}) {
      vega(name, name);
    }
    // vega-functions requires 'vega-selections'; Debian names the file vega-selection.
    vega("vega-selections", "vega-selection");
    // The browser builds of the loader and the canvas (the plain names are Node's).
    m.push_back({"vega-loader", "vega/vega-loader.browser.js", ""});
    m.push_back({"vega-canvas", "vega/vega-canvas.browser.js", "vega/vega-canvas.min.js"});
    m.push_back({"topojson-client", "topojson-client/topojson-client.min.js", "topojson-client/topojson-client.js"});
    return m;
  }();
  return kModules;
}

std::string LoadVegaScript(const std::vector<std::string>& dirs) {
  const std::vector<VegaModule>& modules = VegaModules();
  // The file missing in the folder that had the most of them: what to tell the user.
  std::string missing = modules.front().file;
  size_t most = 0;
  for (const std::string& d : dirs) {
    std::vector<fs::path> paths;
    for (const VegaModule& m : modules) {
      fs::path p = Find(d, m);
      if (p.empty()) {
        if (paths.size() > most) most = paths.size(), missing = m.file;
        break;
      }
      paths.push_back(std::move(p));
    }
    if (paths.size() != modules.size()) continue;
    std::string script = kLoader;
    for (size_t i = 0; i < modules.size(); ++i) {
      script += fmt::format("runxDefine('{}', function (module, exports, require) {{\n", modules[i].name);
      script += WithoutSourceMap(ReadLibraryFile(paths[i]));
      script += "});\n";
    }
    return EscapeForScript(script + kAssemble);
  }
  throw ChartLibraryError(fmt::format(
      "the charts need Vega 5 from the Debian package libjs-vega, and no folder of {} holds '{}'; install it "
      "with: sudo apt-get install libjs-vega (or set RUNX_JAVASCRIPT_DIR to a folder holding vega/ and "
      "topojson-client/)",
      fmt::join(dirs, ", "), missing));
}

std::string EscapeForScript(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size()) {
      const bool end_tag = text[i + 1] == '/' && i + 8 <= text.size() && [&] {
        std::string word = text.substr(i + 2, 6);
        for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return word == "script";
      }();
      if (end_tag) {
        out += "<\\/";
        ++i;  // the '/'
        continue;
      }
      if (text.compare(i, 4, "<!--") == 0) {
        out += "<\\!";
        ++i;  // the '!'
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

}  // namespace runx::report
