#include "spec/identity.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "spec/catalogue.h"
#include "spec/spec.h"
#include "spec/text_data.h"

namespace runx::spec {
namespace {

using json = nlohmann::json;

// Keys that say how trials are scheduled or where results go, not what a trial is.
const char* const kNotTrialKeys[] = {"name",  "description", "results",         "repeats",
                                     "order", "order_seed",  "trial_timeout_s", "sweep"};

// Leaves out the keys of `section` that the entry it names does not read (all entry keys for an
// unknown entry); common keys stay.
void Prune(json* section, const CatalogueSection& catalogue) {
  if (!section->is_object() || !section->contains(catalogue.selector) || !(*section)[catalogue.selector].is_string())
    return;
  const CatalogueEntry* entry = catalogue.Selected(*section);
  for (const std::string& key : catalogue.EntryKeys())
    if (!entry || !entry->Key(key)) section->erase(key);
}

}  // namespace

json UsedConfig(const json& config) {
  json used = config;
  if (!used.is_object()) return used;
  for (const char* key : kNotTrialKeys) used.erase(key);
  const std::string task = used.value("task", "train");
  used.erase(task == "infer" ? "train" : "infer");
  for (const CatalogueSection* catalogue : {&ModelCatalogue(), &DataCatalogue()}) {
    if (used.contains(catalogue->name)) Prune(&used[catalogue->name], *catalogue);
  }
  const json techniques = ResolvedTechniques(used);
  if (!techniques.empty() || used.contains("optimizations")) used["optimizations"] = techniques;
  return used;
}

json ResolvedTechniques(const json& config) {
  if (!config.is_object()) return json::object();
  json techniques = config.value("optimizations", json::object());
  const std::string precision = config.value("precision", "fp32");
  if ((precision == "fp16" || precision == "bf16") && !techniques.contains("amp")) techniques["amp"] = json::object();
  const json data = config.value("data", json::object());
  if (data.is_object() && data.value("batch_size", json(0)) == "auto" && !techniques.contains("auto_batch"))
    techniques["auto_batch"] = json::object();
  return techniques;
}

json InputFiles(const json& config) {
  namespace fs = std::filesystem;
  json inputs = json::object();
  const auto add = [&](const std::string& key, const std::string& path) {
    json entry{{"path", path}};
    std::error_code ec;
    try {
      if (fs::is_directory(path, ec)) {
        // A folder (fashion-mnist's IDX files): every regular file in it, by name.
        std::vector<fs::path> files;
        for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
          if (it->is_regular_file()) files.push_back(it->path());
        }
        std::sort(files.begin(), files.end());
        std::string all;
        for (const auto& f : files) all += f.filename().string() + " " + Sha256OfFile(f.string()) + "\n";
        entry["sha256"] = Sha256Hex(all);
        entry["files"] = files.size();
      } else {
        entry["sha256"] = Sha256OfFile(path);
      }
    } catch (const std::exception& e) {
      entry["sha256"] = fmt::format("unreadable: {}", e.what());
    }
    inputs[key] = entry;
  };
  const auto add_text = [&](const std::string& key, const std::string& path) {
    // Exactly the files the text source reads (a folder's text files, not its indexes or links).
    json entry{{"path", path}};
    try {
      const auto files = ListTextFiles(path);
      std::string all;
      for (const auto& f : files) all += fs::path(f.path).filename().string() + " " + Sha256OfFile(f.path) + "\n";
      entry["sha256"] = files.size() == 1 ? Sha256OfFile(files[0].path) : Sha256Hex(all);
      entry["files"] = files.size();
    } catch (const std::exception& e) {
      entry["sha256"] = fmt::format("unreadable: {}", e.what());
    }
    inputs[key] = entry;
  };
  const json used = UsedConfig(config);
  // The input files of the model and the data source the config names (spec/catalogue.h).
  for (const CatalogueSection* catalogue : {&ModelCatalogue(), &DataCatalogue()}) {
    const json section = used.value(catalogue->name, json::object());
    const CatalogueEntry* entry = catalogue->Selected(section);
    if (!entry) continue;
    for (const CatalogueKey& key : entry->keys) {
      if (key.input == InputKind::kNone || !section.contains(key.name) || !section[key.name].is_string()) continue;
      const std::string name = catalogue->name + "." + key.name, path = section[key.name].get<std::string>();
      if (key.input == InputKind::kTextFiles)
        add_text(name, path);
      else
        add(name, path);
    }
  }
  // A technique's files: compiled_step's package and the sidecar runx reads beside it.
  const json techniques = used.value("optimizations", json::object());
  if (techniques.is_object() && techniques.contains("compiled_step") && techniques["compiled_step"].is_object() &&
      techniques["compiled_step"].contains("package") && techniques["compiled_step"]["package"].is_string()) {
    const std::string package = techniques["compiled_step"]["package"].get<std::string>();
    add("optimizations.compiled_step.package", package);
    add("optimizations.compiled_step.sidecar", package + ".json");
  }
  return inputs;
}

ConfigIdentity IdentifyConfig(const json& config) {
  ConfigIdentity id;
  id.used = UsedConfig(config);
  id.inputs = InputFiles(config);
  // An input file counts by its content, not by where it lies: its path is left out of the hash.
  json hashed = id.used;
  for (const auto& [key, entry] : id.inputs.items()) {
    std::string pointer = "/" + key;  // "optimizations.compiled_step.package" -> /optimizations/compiled_step/package
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    const json::json_pointer at(pointer);
    if (hashed.contains(at)) hashed[at.parent_pointer()].erase(at.back());
  }
  // A python model's TorchScript artifact is made from what the identity holds already (the
  // source's content, the builder, its arguments, the data's shape) under a key over them, by the
  // torch release the environment names; where it lies, and the bytes torch.jit.save wrote (which
  // differ between two saves of one module), are no part of what the trial is.
  if (hashed.contains("model") && hashed["model"].is_object()) hashed["model"].erase("artifact");
  json both{{"config", hashed}, {"inputs", json::object()}};
  for (const auto& [key, entry] : id.inputs.items()) both["inputs"][key] = entry["sha256"];
  id.hash = Sha256Hex(both.dump());
  return id;
}

}  // namespace runx::spec
