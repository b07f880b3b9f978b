#pragma once
// What `runx doctor` and `runx plugins` show, as data: the command line prints it. No LibTorch in
// this header.
#include <string>
#include <utility>
#include <vector>

namespace runx::engine {

/// (name, value) rows: runx build, LibTorch, OS, CPU, threads, BLAS, whether other processes leave
/// the CPUs quiet enough to measure (sampled over a second), MPS, CUDA and its devices, cuDNN, what
/// `device: auto` picks, where autocast works, the plugins found.
struct DoctorReport {
  std::vector<std::pair<std::string, std::string>> rows;
  std::vector<std::string> plugin_errors;  ///< plugin libraries that could not be used
};
DoctorReport Doctor();

/// The LibTorch release runx is built against, major.minor.patch (doctor's "LibTorch" row).
std::string LibTorchRelease();

/// Whether this runx can load AOTInductor packages (LibTorch 2.6 or later): `model: aoti` and the
/// compiled_step technique (doctor's "AOTInductor" row).
bool HasAotInductor();

struct PluginRow {
  std::string name, version, api, libtorch, description;
};
struct PluginList {
  std::vector<PluginRow> plugins;
  std::vector<std::string> dirs;    ///< searched, in order
  std::vector<std::string> errors;  ///< plugin libraries that could not be used
};
PluginList ListPlugins();

}  // namespace runx::engine
