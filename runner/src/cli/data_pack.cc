#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/cleanup.h"
#include "cli/commands.h"
#include "data/pack.h"
#include "plugins/dirs.h"
#include "spec/spec.h"

namespace runx::cli {
namespace {

namespace fs = std::filesystem;

/// A YAML scalar for a path: plain when safe, else single-quoted.
std::string YamlString(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '_' || c == '-';
  });
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string Size(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30)) return fmt::format("{:.1f} GiB", bytes / double(int64_t{1} << 30));
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{:.1f} MiB", bytes / double(int64_t{1} << 20));
  return fmt::format("{:.1f} KiB", bytes / 1024.0);
}

/// The data section as YAML, keys in reading order.
std::string DataYaml(const nlohmann::json& d) {
  std::string out = "data:\n";
  for (const char* key :
       {"source", "path", "labels", "eval_path", "eval_labels", "num_classes", "batch_size", "shuffle", "normalize"}) {
    if (!d.contains(key)) continue;
    const auto& v = d[key];
    std::string text;
    if (v.is_string()) {
      text = YamlString(v.get<std::string>());
    } else if (v.is_object()) {
      std::vector<std::string> items;
      for (const auto& [k, x] : v.items()) items.push_back(fmt::format("{}: {}", k, x.dump()));
      text = fmt::format("{{{}}}", fmt::join(items, ", "));
    } else {
      text = v.dump();
    }
    out += fmt::format("  {}: {}\n", key, text);
  }
  return out;
}

}  // namespace

int DataPack(const data::PackRequest& request) {
  if (request.experiment.empty() == request.source.empty()) {
    fmt::print(stderr, "runx: error: runx data pack takes an experiment file or --source, {}\n",
               request.source.empty() ? "and got neither" : "not both");
    return 2;
  }
  nlohmann::json data;
  uint64_t seed = 0;
  if (!request.experiment.empty()) {
    std::vector<spec::Override> sets;
    for (const auto& s : request.sets) sets.push_back({s});
    try {
      const auto e = spec::Load(request.experiment, sets, spec::SchemaSet::Load(plugins::PluginDirs()));
      data = e.config.at("data");
      seed = e.config.value("seed", uint64_t{0});
    } catch (const spec::SpecError& e) {
      fmt::print(stderr, "{}", e.Render());
      return 2;
    }
    if (!request.path.empty()) data["path"] = request.path;
  } else {
    if (request.source != "fashion-mnist") {
      fmt::print(stderr,
                 "runx: error: --source {} needs an experiment file (for data.shape and data.num_classes); "
                 "write one and run 'runx data pack EXPERIMENT.yaml --count N --out DIR'\n",
                 request.source);
      return 2;
    }
    data = {{"source", request.source}, {"batch_size", 128}};
    if (!request.path.empty()) data["path"] = request.path;
  }
  if (request.train_limit > 0) data["train_limit"] = request.train_limit;
  data::PackResult r;
  try {
    // Ctrl-C, SIGTERM and SIGHUP remove the pack's temporary files (each is registered).
    const base::RemoveOnSignalHandlers cleanup;
    r = data::Pack(data, seed, request.out, request.count);
  } catch (const std::runtime_error& e) {  // data::DataError
    fmt::print(stderr, "runx: error: {}\n", e.what());
    return 1;
  }
  fmt::print("packed {} data into {}:\n", data["source"].get<std::string>(),
             fs::path(r.files[0].path).parent_path().string());
  for (const auto& f : r.files)
    fmt::print("  {:<18} {:<8} [{}]  {}\n", fs::path(f.path).filename().string(), f.dtype, fmt::join(f.shape, ", "),
               Size(f.bytes));
  fmt::print("\nread them with:\n\n{}", DataYaml(r.data));
  return 0;
}

}  // namespace runx::cli
