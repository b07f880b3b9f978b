#include "spec/python_model.h"

#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/file_pair.h"
#include "spec/identity.h"

namespace runx::spec {
namespace {

using json = nlohmann::json;

}  // namespace

std::string ShellWords(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_-+=.,:/@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

std::string PythonBuilder(const json& model) {
  return model.is_object() && model.contains("builder") && model["builder"].is_string()
             ? model["builder"].get<std::string>()
             : "build";
}

bool IsPythonModel(const json& config) {
  return config.is_object() && config.contains("model") && config["model"].is_object() &&
         config["model"].value("name", json()) == "python";
}

std::vector<int64_t> StatedSampleShape(const json& data) {
  if (!data.is_object()) return {};
  const std::string source = data.value("source", "");
  if (source == "fashion-mnist") return {1, 28, 28};
  if ((source == "synthetic" || source == "memmap") && data.contains("shape") && data["shape"].is_array())
    return data["shape"].get<std::vector<int64_t>>();
  return {};
}

std::vector<std::string> PythonModuleArgs(const json& model) {
  std::vector<std::string> args{"--module", model.value("path", "") + ":" + PythonBuilder(model)};
  const json kwargs = model.value("kwargs", json::object());
  if (kwargs.is_object() && !kwargs.empty()) args.insert(args.end(), {"--builder-kwargs", kwargs.dump()});
  return args;
}

PythonArtifact PythonModelArtifact(const json& config, const std::string& dir, const std::string& torch_release) {
  PythonArtifact a;
  const json model = config.value("model", json::object());
  const json data = config.value("data", json::object());
  const std::string path = model.value("path", "");
  const std::string builder = PythonBuilder(model);
  a.source = path + ":" + builder;
  std::string source_sha;
  try {
    source_sha = Sha256OfFile(path);
  } catch (const std::exception& e) {
    a.reason = fmt::format("model 'python' needs its source {}: {}", path, e.what());
    return a;
  }
  const std::vector<int64_t> shape = StatedSampleShape(data);
  if (shape.empty()) {
    a.reason =
        fmt::format("runx compile makes {} into TorchScript for one sample shape; state it in data.shape", a.source);
    return a;
  }
  json classes = model.contains("num_classes") ? model["num_classes"] : data.value("num_classes", json());
  if (classes.is_null() && data.value("source", "") == "fashion-mnist") classes = 10;
  a.facts = {{"format", "runx-torchscript/1"},
             {"source_sha256", source_sha},
             {"builder", builder},
             {"kwargs", model.value("kwargs", json::object())},
             {"shape", shape},
             {"num_classes", classes},
             {"libtorch", torch_release}};
  a.key = base::Sha256Hex(a.facts.dump()).substr(0, 16);
  const std::string stem = std::filesystem::path(path).stem().string();
  a.path = (std::filesystem::path(dir) / fmt::format("{}-{}-{}.ts.pt", stem, builder, a.key)).string();
  a.args = PythonModuleArgs(model);
  a.args.insert(a.args.end(), {"--shape", fmt::format("{}", fmt::join(shape, ","))});
  return a;
}

bool ArtifactPresent(const std::string& path) { return base::FilePairPresent(path); }

void SetArtifact(json* config, const std::string& path) { (*config)["model"]["artifact"] = path; }

std::string TorchScriptCommand(const PythonArtifact& a, const std::string& script) {
  return fmt::format("python3 {} {} --torchscript {}", script, ShellWords(a.args), a.path);
}

}  // namespace runx::spec
