#include "plugins/loader.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <boost/dll/shared_library.hpp>

namespace runx::plugins {
namespace fs = std::filesystem;

namespace {

std::string VersionString(int v) { return fmt::format("{}.{}", v / 100, v % 100); }

/// libamp.so -> amp
std::string Stem(const fs::path& p) {
  std::string s = p.stem().string();
  return s.rfind("lib", 0) == 0 ? s.substr(3) : s;
}

bool IsPluginFile(const fs::path& p) {
  const auto ext = p.extension().string();
  return p.filename().string().rfind("lib", 0) == 0 && (ext == ".so" || ext == ".dylib");
}

// Why the dynamic loader refused `path`, in its own words where it has them (Boost.DLL's error
// code says "Bad file descriptor" for a file that is no library).
std::string WhyNotLoaded(const std::string& path, const std::string& boost_says) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return boost_says;
  unsigned char magic[4] = {0, 0, 0, 0};
  in.read(reinterpret_cast<char*>(magic), 4);
  const uint32_t word = uint32_t{magic[0]} << 24 | uint32_t{magic[1]} << 16 | uint32_t{magic[2]} << 8 | magic[3];
  const bool elf = magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
  const bool mach_o =
      word == 0xfeedface || word == 0xfeedfacf || word == 0xcefaedfe || word == 0xcffaedfe || word == 0xcafebabe;
  if (!elf && !mach_o) return "not a shared library (the file is neither ELF nor Mach-O); rebuild the plugin";
  // The loader's own reason: a missing dependency, an undefined symbol, another architecture.
  dlerror();
  if (void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
    ::dlclose(handle);
    return boost_says;
  }
  const char* why = dlerror();
  return why ? std::string(why) : boost_says;
}

}  // namespace

LoadedPlugin LoadPlugin(const std::string& path) {
  const std::string file = fs::path(path).filename().string();
  // Libraries are deliberately leaked: unloading one while anything it created is alive is
  // undefined behaviour, and runx never needs the memory back.
  auto* lib = new boost::dll::shared_library;
  boost::dll::fs::error_code ec;
  lib->load(path, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local, ec);
  if (ec) throw PluginError(fmt::format("cannot load plugin '{}': {}", path, WhyNotLoaded(path, ec.message())));
  if (!lib->has(kPluginEntryName))
    throw PluginError(
        fmt::format("plugin '{}' has no '{}' entry; define it with RUNX_PLUGIN(...) "
                    "from runx/plugin_export.h",
                    file, kPluginEntryName));
  const PluginDescriptor* d = lib->get_alias<PluginEntry>(kPluginEntryName)();
  if (d == nullptr) throw PluginError(fmt::format("plugin '{}' returned no descriptor", file));
  if (d->api_version != kPluginApiVersion)
    throw PluginError(
        fmt::format("plugin '{}' uses plugin API v{}, this runx supports v{}; rebuild "
                    "the plugin against this runx",
                    file, d->api_version, kPluginApiVersion));
  if (d->torch_version != compat::kTorchVersion)
    throw PluginError(
        fmt::format("plugin '{}' was built against LibTorch {}, this runx uses LibTorch "
                    "{}; rebuild the plugin",
                    file, VersionString(d->torch_version), VersionString(compat::kTorchVersion)));
  if (Stem(path) != d->name)
    throw PluginError(
        fmt::format("plugin '{}' declares the name '{}'; a plugin's name must equal its "
                    "file stem '{}'",
                    file, d->name, Stem(path)));
  if (d->create == nullptr) throw PluginError(fmt::format("plugin '{}' has no factory", file));
  return LoadedPlugin{path, d};
}

Registry Registry::Discover(const std::vector<std::string>& dirs) {
  Registry r;
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_regular_file() && IsPluginFile(e.path())) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      if (r.plugins_.count(Stem(f))) continue;
      try {
        auto p = LoadPlugin(f.string());
        r.plugins_.emplace(p.descriptor->name, p);
      } catch (const PluginError& e) {
        r.errors_.push_back(e.what());
      }
    }
  }
  return r;
}

const LoadedPlugin* Registry::Find(const std::string& name) const {
  auto it = plugins_.find(name);
  return it == plugins_.end() ? nullptr : &it->second;
}

std::unique_ptr<Technique> Registry::Create(const std::string& name, const nlohmann::json& params) const {
  const LoadedPlugin* p = Find(name);
  if (!p) throw PluginError(fmt::format("no plugin provides technique '{}'", name));
  auto t = p->descriptor->create();
  t->configure(params);
  return t;
}

}  // namespace runx::plugins
