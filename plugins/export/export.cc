// export: saves the trained model when a trial ends (on_finish).
//   weights.pt        the parameters and buffers of the nn::Module (torch::serialize archive, CPU,
//                     contiguous): load into a freshly built model of the same config with
//                     torch::serialize::InputArchive + Module::load. Any model.
//   model.frozen.pt   torchscript models only: the original TorchScript file re-loaded onto the
//                     trial's device, the trained weights copied in by name, eval(),
//                     torch::jit::freeze and (optimize: true) torch::jit::optimize_for_inference,
//                     which specializes the graph for that device (e.g. oneDNN ops on the CPU): its
//                     constants are on that device (recorded as export.device). Load with
//                     torch::jit::load / torch.jit.load(map_location=...) (coremltools' input).
// The frozen module is checked against the trained model on a fixed input; the largest difference
// is recorded as export_max_abs_diff.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include <torch/script.h>
#include <torch/torch.h>

#include "runx/plugin_export.h"

namespace {

// POSIX calls, not std::filesystem: pip's libtorch.so (2.x) exports its own copies of libstdc++'s
// filesystem symbols, and the dynamic linker may bind a plugin's calls to them (runx's parent died
// in one on the H200; see runner/src/sweep/child.cc).

std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd)) throw std::runtime_error("getcwd failed: " + std::string(std::strerror(errno)));
  return std::string(cwd) + "/" + path;
}

/// mkdir -p.
void MakeDirs(const std::string& dir) {
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i < dir.size() && dir[i] != '/') continue;
    const std::string prefix = dir.substr(0, i);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      throw std::runtime_error("cannot create " + prefix + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) throw std::runtime_error(dir + " is not a directory");
}

double FileBytes(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw std::runtime_error("cannot stat " + path + ": " + std::strerror(errno));
  return static_cast<double>(st.st_size);
}

std::string ModelName(const nlohmann::json& config) {
  const auto m = config.find("model");
  return m != config.end() && m->is_object() ? m->value("name", std::string()) : std::string();
}

/// Module::save, but every tensor on the CPU and contiguous, so the file loads anywhere.
void SaveCpu(const torch::nn::Module& module, torch::serialize::OutputArchive& archive) {
  for (const auto& p : module.named_parameters(/*recurse=*/false))
    archive.write(p.key(), p.value().detach().to(torch::kCPU).contiguous());
  for (const auto& b : module.named_buffers(/*recurse=*/false))
    archive.write(b.key(), b.value().detach().to(torch::kCPU).contiguous(), /*is_buffer=*/true);
  for (const auto& c : module.named_children()) {
    if (!c.value()->is_serializable()) continue;
    torch::serialize::OutputArchive child(archive.compilation_unit());
    SaveCpu(*c.value(), child);
    archive.write(c.key(), child);
  }
}

std::string ShapeText(c10::IntArrayRef shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

class Export : public runx::Technique {
 public:
  void configure(const nlohmann::json& params) override {
    const auto p = params.is_object() ? params : nlohmann::json::object();
    format_ = p.value("format", std::string("auto"));
    dir_ = p.value("dir", std::string());
    optimize_ = p.value("optimize", true);
  }

  runx::CheckResult check(const runx::TrialPlan& plan) override {
    const std::string model = ModelName(plan.config());
    if (model == "aoti")
      return runx::CheckResult::Incompatible(
          "an AOTInductor package is an exported model already: it has no "
          "TorchScript module or trainable weights to export");
    if ((format_ == "torchscript" || format_ == "both") && model != "torchscript")
      return runx::CheckResult::Incompatible(
          "format '" + format_ + "' needs a TorchScript model (model: {name: torchscript, path: FILE}); '" + model +
          "' is a built-in C++ module, which cannot be scripted: use format: weights and load weights.pt into "
          "a model of the same config");
    return runx::CheckResult::Ok();
  }

  void on_finish(runx::TrialContext& trial) override {
    const bool torchscript_model = ModelName(trial.config()) == "torchscript";
    const bool weights = format_ != "torchscript";
    const bool frozen = format_ == "torchscript" || format_ == "both" || (format_ == "auto" && torchscript_model);
    std::string dir = Absolute(dir_.empty() ? trial.artifact_dir() : dir_);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    MakeDirs(dir);

    auto& model = trial.model();
    for (const auto& p : model.parameters())
      if (!torch::isfinite(p.detach()).all().item<bool>()) {
        trial.note("export: the model has non-finite weights; exporting them anyway");
        break;
      }
    if (weights) {
      const std::string path = dir + "/weights.pt";
      torch::serialize::OutputArchive archive;
      SaveCpu(model, archive);
      archive.save_to(path);
      trial.record("export.weights", path);
      trial.metric("export_weights_bytes", FileBytes(path), "bytes");
    }
    if (frozen) ExportFrozen(trial, dir + "/model.frozen.pt");
  }

 private:
  void ExportFrozen(runx::TrialContext& trial, const std::string& out) {
    const std::string source = trial.config().at("model").at("path").get<std::string>();
    // Frozen and optimized where the trial ran: optimize_for_inference's rewrites are device-specific.
    const c10::Device device = trial.device();
    torch::jit::Module module = torch::jit::load(source, device);

    // The runner's wrapper registers the jit module's tensors under the jit names (models/
    // torchscript.cc), so the trained weights map back one to one.
    std::map<std::string, torch::Tensor> trained;
    for (const auto& p : trial.model().named_parameters()) trained.emplace(p.key(), p.value());
    for (const auto& b : trial.model().named_buffers()) trained.emplace(b.key(), b.value());
    std::set<const void*> done;
    size_t copied = 0;
    {
      torch::NoGradGuard no_grad;
      const auto copy = [&](const std::string& name, torch::Tensor target) {
        const auto it = trained.find(name);
        if (it == trained.end()) {
          if (done.count(target.unsafeGetTensorImpl())) return;  // an alias of a tensor already copied
          throw std::runtime_error("'" + name + "' of " + source +
                                   " is not in the trained model (was the file replaced during the trial?)");
        }
        if (it->second.sizes() != target.sizes())
          throw std::runtime_error("'" + name + "' of " + source + " has shape " + ShapeText(target.sizes()) +
                                   ", the trained tensor " + ShapeText(it->second.sizes()));
        target.copy_(it->second.detach());
        done.insert(target.unsafeGetTensorImpl());
        ++copied;
      };
      for (const auto& p : module.named_parameters(/*recurse=*/true)) copy(p.name, p.value);
      for (const auto& b : module.named_buffers(/*recurse=*/true)) copy(b.name, b.value);
    }
    if (copied != trained.size())
      throw std::runtime_error("copied " + std::to_string(copied) + " tensors into " + source + ", the model has " +
                               std::to_string(trained.size()));

    if (module.hasattr("training")) module.eval();  // a module built in C++ may have no such attribute
    torch::jit::Module frozen = torch::jit::freeze(module);
    if (optimize_) frozen = torch::jit::optimize_for_inference(frozen);
    frozen.save(out);
    trial.record("export.torchscript", out);
    trial.record("export.device", device.str());
    trial.metric("export_torchscript_bytes", FileBytes(out), "bytes");

    // The frozen module must compute what the trained model computes (in eval mode).
    std::vector<int64_t> shape{2};
    for (auto d : trial.sample_shape()) shape.push_back(d);
    int64_t n = 1;
    for (auto d : shape) n *= d;
    // Text data gives token ids (data sources declare it; the plugin API has the config): the test
    // input is then ids 0, 1, 2, ... modulo the vocabulary, which the model's logits tell.
    const bool tokens = trial.config().value("data", nlohmann::json::object()).value("source", "") == "text";
    torch::Tensor input = torch::linspace(-1.0, 1.0, n).reshape(shape);
    torch::Tensor want;
    {
      torch::NoGradGuard no_grad;
      auto& model = trial.model();
      const bool was_training = model.is_training();
      model.eval();
      if (tokens) {
        const int64_t vocab = trial.forward(torch::zeros(shape, torch::kLong).to(trial.device())).size(-1);
        input = torch::arange(n, torch::kLong).remainder(vocab).reshape(shape);
      }
      want = trial.forward(input.to(trial.device())).to(torch::kCPU, torch::kFloat);
      model.train(was_training);
      const auto got = frozen.forward({input.to(device)}).toTensor().to(torch::kCPU, torch::kFloat);
      const double diff = (got - want).abs().max().item<double>();
      trial.metric("export_max_abs_diff", diff);
      const double scale = std::max(1.0, want.abs().max().item<double>());
      if (!(diff <= 1e-3 * scale))
        trial.note("export: the frozen module differs from the trained model by " + std::to_string(diff) +
                   " on a test input");
    }
  }

  std::string format_ = "auto", dir_;
  bool optimize_ = true;
};

}  // namespace

RUNX_PLUGIN(export, "1.1.0", "saves the trained model: weights (any model), frozen TorchScript (torchscript models)",
            Export)
