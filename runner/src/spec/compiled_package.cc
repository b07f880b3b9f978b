#include "spec/compiled_package.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/file_pair.h"
#include "spec/identity.h"
#include "spec/python_model.h"
#include "spec/spec.h"
#include "spec/text_data.h"

namespace runx::spec {
namespace {

using json = nlohmann::json;

/// runx's ResNets, which compile_step.py builds by name (torchvision's definitions, whose names it
/// maps to runx's); gpt it builds from tools/gpt_model.py.
constexpr const char* kBuilt[] = {"resnet18", "resnet50"};

const json* CompiledStep(const json& config) {
  if (!config.is_object() || !config.contains("optimizations") || !config["optimizations"].is_object()) return nullptr;
  const json& techniques = config["optimizations"];
  if (!techniques.contains("compiled_step") || !techniques["compiled_step"].is_object()) return nullptr;
  return &techniques["compiled_step"];
}

/// The autocast dtype the trial runs, as amp decides it: amp's dtype, else the experiment's
/// precision when fp16/bf16, else bf16; no amp: fp32.
std::string Precision(const json& config, const json& techniques) {
  if (!techniques.contains("amp")) return "fp32";
  const json& amp = techniques["amp"];
  if (amp.is_object() && amp.contains("dtype") && amp["dtype"].is_string()) return amp["dtype"].get<std::string>();
  const std::string precision = config.value("precision", "fp32");
  return precision == "fp16" || precision == "bf16" ? precision : "bf16";
}

}  // namespace

bool WantsAutoPackage(const json& config) {
  const json* step = CompiledStep(config);
  return step && step->value("package", json("auto")) == "auto";
}

CompiledPackage AutoPackage(const json& config, const std::string& dir, const std::string& torch_release) {
  CompiledPackage p;
  const json used = UsedConfig(config);
  const json model = used.value("model", json::object());
  const json data = used.value("data", json::object());
  const json techniques = ResolvedTechniques(used);
  const std::string name = model.value("name", "");
  const auto refuse = [&](const std::string& why) {
    p.reason = "compiled_step: package: auto cannot name this trial's package: " + why;
    return p;
  };
  const std::string dtype = Precision(used, techniques);
  if (dtype != "fp32" && dtype != "bf16")
    return refuse("compiled_step compiles fp32 or bf16 steps; this trial's amp dtype is " + dtype);
  if (!data.contains("batch_size") || !data["batch_size"].is_number_integer())
    return refuse("the package is compiled for one batch size; data.batch_size must be a number, not " +
                  data.value("batch_size", json("absent")).dump());
  const int64_t batch = data["batch_size"].get<int64_t>();
  const bool channels_last = techniques.contains("channels_last");
  std::vector<int64_t> shape;
  json classes;
  json model_facts = model;
  std::string file_name = name;
  if (name == "gpt") {
    // tools/gpt_model.py's definition over byte tokens: [batch, seq_len] ids from [0, 256).
    if (data.value("source", "") != "text" || data.value("tokenizer", std::string(kDefaultTokenizer)) != "bytes")
      return refuse(
          "compile_step.py compiles gpt over byte tokens (data: {source: text, tokenizer: bytes}); with "
          "another vocabulary make the package with --vocab and name it in 'package'");
    if (model.value("dropout", 0.0) != 0.0)
      return refuse(
          "gpt's dropout draws random numbers inside the step; compile_step.py compiles it without (dropout: 0)");
    if (!data.contains("seq_len") || !data["seq_len"].is_number_integer())
      return refuse("the package is compiled for one sequence length; data.seq_len must be stated");
    shape = {data["seq_len"].get<int64_t>()};
    classes = 256;
    p.args = {"--model",   "gpt",
              "--n-layer", std::to_string(model.value("n_layer", 4)),
              "--n-head",  std::to_string(model.value("n_head", 4)),
              "--d-model", std::to_string(model.value("d_model", 128)),
              "--seq-len", std::to_string(shape[0])};
    if (model.contains("block_size")) p.args.insert(p.args.end(), {"--block-size", model["block_size"].dump()});
    p.args.insert(p.args.end(), {"--vocab", "256", "--batch", std::to_string(batch), "--dtype", dtype});
  } else if (std::find(std::begin(kBuilt), std::end(kBuilt), name) != std::end(kBuilt)) {
    if (!data.contains("shape") || !data["shape"].is_array())
      return refuse("the sample shape must be stated (data.shape: [3, H, H]) to compile for it");
    shape = data["shape"].get<std::vector<int64_t>>();
    if (shape.size() != 3 || shape[0] != 3 || shape[1] != shape[2])
      return refuse(fmt::format("compile_step.py compiles {} for images [3, H, H]; data.shape is [{}]", name,
                                fmt::join(shape, ", ")));
    classes = model.contains("num_classes") ? model["num_classes"] : data.value("num_classes", json());
    if (!classes.is_number_integer())
      return refuse("the number of classes must be stated (model.num_classes) to compile the loss for it");
    p.args = {"--model",       name,
              "--batch",       std::to_string(batch),
              "--image-size",  std::to_string(shape[1]),
              "--num-classes", std::to_string(classes.get<int64_t>()),
              "--dtype",       dtype};
    if (channels_last) p.args.push_back("--channels-last");
  } else if (name == "python") {
    // The user's builder, as runx compile makes its TorchScript artifact (spec/python_model.h): the
    // same source, builder and arguments, so the package and the eager baseline start alike. The
    // source counts by its content, not by where it lies.
    std::string source_sha;
    try {
      source_sha = Sha256OfFile(model.value("path", ""));
    } catch (const std::exception& e) {
      return refuse(fmt::format("model 'python' needs its source: {}", e.what()));
    }
    shape = StatedSampleShape(data);
    if (shape.empty()) return refuse("the sample shape must be stated (data.shape) to compile for it");
    classes = model.contains("num_classes") ? model["num_classes"] : data.value("num_classes", json());
    if (classes.is_null() && data.value("source", "") == "fashion-mnist") classes = 10;
    if (!classes.is_number_integer())
      return refuse("the number of classes must be stated (model.num_classes) to compile the loss for it");
    p.args = PythonModuleArgs(model);
    p.args.insert(p.args.end(),
                  {"--shape", fmt::format("{}", fmt::join(shape, ",")), "--num-classes",
                   std::to_string(classes.get<int64_t>()), "--batch", std::to_string(batch), "--dtype", dtype});
    if (channels_last) p.args.push_back("--channels-last");
    model_facts = {{"name", name},
                   {"builder", PythonBuilder(model)},
                   {"kwargs", model.value("kwargs", json::object())},
                   {"source_sha256", source_sha}};
    const std::string stem = std::filesystem::path(model.value("path", "")).stem().string();
    file_name = fmt::format("{}-{}", stem, PythonBuilder(model));
  } else {
    return refuse(fmt::format(
        "tools/compile_step.py builds runx's resnet18, resnet50, gpt and python models, not model '{}'; make the "
        "package "
        "with `python3 tools/compile_step.py --module FILE.py:FN ... -o FILE.pt2` and name FILE.pt2 in 'package'",
        name));
  }
  p.facts = {{"format", "runx-compiled-step/1"},
             {"model", model_facts},
             {"batch", batch},
             {"shape", shape},
             {"num_classes", classes},
             {"dtype", dtype},
             {"channels_last", channels_last},
             {"device", "cuda"},
             {"libtorch", torch_release}};
  p.key = Sha256Hex(p.facts.dump()).substr(0, 16);
  p.path = (std::filesystem::path(dir) /
            fmt::format("{}-b{}-{}{}-{}.pt2", file_name, batch, dtype, channels_last ? "-cl" : "", p.key))
               .string();
  return p;
}

bool PackagePresent(const std::string& path) { return base::FilePairPresent(path); }

void SetPackage(json* config, const std::string& path) {
  (*config)["optimizations"]["compiled_step"]["package"] = path;
}

std::string CompiledDirFor(const std::string& db) {
  const auto parent = std::filesystem::path(db).parent_path();
  return (parent.empty() ? std::filesystem::path("compiled") : parent / "compiled").string();
}

std::string CompileCommand(const CompiledPackage& p, const std::string& script) {
  return fmt::format("python3 {} {} --measure 0 -o {}", script, ShellWords(p.args), p.path);
}

}  // namespace runx::spec
