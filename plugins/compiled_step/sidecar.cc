#include "sidecar.h"

#include <fstream>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runx/torch_release.h"

namespace runx::compiled_step {
namespace {

constexpr const char* kMakeIt =
    "make it with tools/compile_step.py (e.g. python3 tools/compile_step.py --model resnet50 --batch 256 "
    "--dtype bf16 --channels-last -o FILE.pt2), which writes FILE.pt2 and FILE.pt2.json";

std::string Shape(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

std::vector<Slot> Slots(const nlohmann::json& list, const std::string& path, const char* what) {
  if (!list.is_array()) throw std::invalid_argument(fmt::format("{}: '{}' must be a list", path, what));
  std::vector<Slot> slots;
  for (const auto& e : list) {
    Slot s;
    s.kind = e.at("kind").get<std::string>();
    s.name = e.at("name").get<std::string>();
    s.shape = e.at("shape").get<std::vector<int64_t>>();
    s.stride = e.at("stride").get<std::vector<int64_t>>();
    s.dtype = e.at("dtype").get<std::string>();
    slots.push_back(std::move(s));
  }
  return slots;
}

}  // namespace

bool SameLayout(const torch::Tensor& t, const std::vector<int64_t>& stride) {
  if (static_cast<size_t>(t.dim()) != stride.size()) return false;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1 && t.stride(d) != stride[d]) return false;
  return true;
}

std::string DtypeName(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kFloat:
      return "float32";
    case at::kBFloat16:
      return "bfloat16";
    case at::kHalf:
      return "float16";
    case at::kDouble:
      return "float64";
    case at::kLong:
      return "int64";
    case at::kInt:
      return "int32";
    default:
      return c10::toString(t.scalar_type());
  }
}

Sidecar LoadSidecar(const std::string& package) {
  Sidecar s;
  s.path = package + ".json";
  std::ifstream in(s.path);
  if (!in)
    throw std::invalid_argument(
        fmt::format("compiled_step: cannot read '{}', the sidecar of package '{}': {}", s.path, package, kMakeIt));
  nlohmann::json j;
  try {
    in >> j;
    if (j.value("format", "") != "runx-compiled-step/1")
      throw std::invalid_argument(
          fmt::format("'format' is '{}', expected 'runx-compiled-step/1'", j.value("format", "")));
    s.torch = j.at("torch").get<std::string>();
    s.triton = j.value("triton", nlohmann::json()).is_string() ? j["triton"].get<std::string>() : "";
    s.device = j.value("device", "");
    s.model = j.value("model", "");
    s.dtype = j.at("dtype").get<std::string>();
    s.channels_last = j.at("channels_last").get<bool>();
    s.batch = j.at("batch").get<int64_t>();
    s.shape = j.at("shape").get<std::vector<int64_t>>();
    s.inputs = Slots(j.at("inputs"), s.path, "inputs");
    s.outputs = Slots(j.at("outputs"), s.path, "outputs");
  } catch (const std::exception& e) {
    throw std::invalid_argument(
        fmt::format("compiled_step: '{}' is not a compiled-step sidecar: {}; {}", s.path, e.what(), kMakeIt));
  }
  int losses = 0;
  for (const auto& o : s.outputs) losses += o.kind == "loss";
  if (losses != 1)
    throw std::invalid_argument(fmt::format("compiled_step: '{}' lists {} loss outputs, expected one", s.path, losses));
  for (const char* key : {"model", "torch", "triton", "cuda", "device", "dtype", "channels_last", "batch",
                          "parameter_count", "torch_export_s", "compile_s", "bytes"})
    if (j.contains(key)) s.facts[key] = j[key];
  return s;
}

std::string PlanMismatch(const Sidecar& s, const TrialPlan& plan) {
  const std::string where = fmt::format("the package (sidecar '{}')", s.path);
  if (plan.task() == Task::kInfer)
    return "compiled_step compiles a training step; for inference run an AOTInductor package as "
           "model: {name: aoti, path: FILE.pt2} (tools/aoti_package.py makes one)";
  const nlohmann::json* amp = plan.technique("amp");
  const std::string trial_dtype = amp ? amp->value("dtype", "bf16") : "fp32";
  if (trial_dtype != s.dtype)
    return fmt::format(
        "{} computes in {} (its autocast is compiled in), the trial in {}: set precision: {} or "
        "rebuild the package with --dtype {}",
        where, s.dtype, trial_dtype, s.dtype, trial_dtype == "fp32" ? "fp32" : trial_dtype);
  if (amp && amp->value("loss_scale", nlohmann::json("none")) != "none")
    return "loss scaling scales the loss before backward, which the package computes inside; use bf16 without "
           "loss scaling (amp: {loss_scale: none})";
  const nlohmann::json* cl = plan.technique("channels_last");
  const bool trial_cl = cl != nullptr && cl->value("inputs", true);
  if (trial_cl != s.channels_last)
    return fmt::format("{} was compiled for {} tensors, the trial's are {}: {}", where,
                       s.channels_last ? "channels-last" : "contiguous", trial_cl ? "channels-last" : "contiguous",
                       s.channels_last ? "add the channels_last technique"
                                       : "remove channels_last or rebuild the package with --channels-last");
  for (const char* other : {"anomaly", "auto_batch", "data_parallel"}) {
    if (!plan.technique(other)) continue;
    const std::string name = other;
    if (name == "anomaly")
      return "anomaly checks the autograd graph, and a compiled step has none (its backward is compiled in)";
    if (name == "auto_batch")
      return fmt::format("{} is compiled for batch {}: the batch size cannot be searched; set data.batch_size: {}",
                         where, s.batch, s.batch);
    return "data_parallel reduces gradients as autograd produces them; a compiled step returns them all at the "
           "end (not supported yet)";
  }
  const auto data = plan.config().value("data", nlohmann::json::object());
  if (data.contains("batch_size") && data["batch_size"].is_number_integer() &&
      data["batch_size"].get<int64_t>() != s.batch)
    return fmt::format(
        "{} is compiled for batch {}, the trial's data.batch_size is {}: use {} or rebuild the "
        "package with --batch {}",
        where, s.batch, data["batch_size"].get<int64_t>(), s.batch, data["batch_size"].get<int64_t>());
  return "";
}

std::string ModelMismatch(const Sidecar& s, const torch::nn::Module& model, int64_t batch,
                          const std::vector<int64_t>& sample_shape, size_t limit) {
  std::vector<std::string> problems;
  size_t total = 0;
  const auto add = [&](std::string p) {
    if (++total <= limit) problems.push_back(std::move(p));
  };
  if (batch != s.batch) add(fmt::format("batch: the package's is {}, the trial's {}", s.batch, batch));
  if (sample_shape != s.shape)
    add(fmt::format("sample shape: the package's is {}, the trial's data gives {}", Shape(s.shape),
                    Shape(sample_shape)));
  std::map<std::string, torch::Tensor> params, buffers;
  for (const auto& p : model.named_parameters()) params[p.key()] = p.value();
  for (const auto& b : model.named_buffers()) buffers[b.key()] = b.value();
  const size_t model_params = params.size(), model_buffers = buffers.size();
  size_t want_params = 0, want_buffers = 0;
  for (const auto& slot : s.inputs) {
    if (slot.kind != "parameter" && slot.kind != "buffer") continue;
    auto& pool = slot.kind == "parameter" ? params : buffers;
    (slot.kind == "parameter" ? want_params : want_buffers)++;
    const auto it = pool.find(slot.name);
    if (it == pool.end()) {
      add(fmt::format("{} '{}' {} {}: the model has no {} of that name", slot.kind, slot.name, slot.dtype,
                      Shape(slot.shape), slot.kind));
      continue;
    }
    const torch::Tensor& t = it->second;
    if (t.sizes().vec() != slot.shape || DtypeName(t) != slot.dtype)
      add(fmt::format("{} '{}': the package's is {} {}, the model's {} {}", slot.kind, slot.name, slot.dtype,
                      Shape(slot.shape), DtypeName(t), Shape(t.sizes().vec())));
    else if (!SameLayout(t, slot.stride))
      add(fmt::format("{} '{}' {}: the package expects strides {}, the model's are {} ({})", slot.kind, slot.name,
                      Shape(slot.shape), Shape(slot.stride), Shape(t.strides().vec()),
                      s.channels_last ? "the package is channels-last" : "the package is contiguous"));
    pool.erase(it);
  }
  for (const auto& [name, t] : params)
    add(fmt::format("parameter '{}' {} {}: the model has it, the package does not", name, DtypeName(t),
                    Shape(t.sizes().vec())));
  for (const auto& [name, t] : buffers)
    add(fmt::format("buffer '{}' {} {}: the model has it, the package does not", name, DtypeName(t),
                    Shape(t.sizes().vec())));
  if (problems.empty()) return "";
  // The first line is what summaries show: it names the first difference.
  std::string text = fmt::format(
      "the package (sidecar '{}', model '{}', {} parameters and {} buffers) does not fit "
      "the trial's model ({} parameters, {} buffers): {}{}",
      s.path, s.model, want_params, want_buffers, model_params, model_buffers, problems[0],
      total == 1                 ? std::string()
      : total == problems.size() ? fmt::format("; and {} more:", total - 1)
                                 : fmt::format("; and {} more, the first {} of them:", total - 1, problems.size() - 1));
  for (size_t i = 1; i < problems.size(); ++i) text += "\n  " + problems[i];
  return text;
}

std::string TorchMismatch(const std::string& compiled, const std::string& running) {
  if (TorchRelease(compiled) == TorchRelease(running)) return "";
  return fmt::format(
      "the package was compiled by PyTorch {}, this runx runs LibTorch {}: AOTInductor packages run "
      "on the release that built them; rebuild it with that LibTorch's PyTorch",
      compiled, running);
}

}  // namespace runx::compiled_step
