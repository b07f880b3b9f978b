// model: {name: torchscript, path: model.pt}: a TorchScript module (torch.jit.save in Python, or
// torch::jit::Module::save) trained like a built-in model.
//
// The wrapper registers the jit module's parameters and buffers on itself, as the SAME tensors
// (not copies), under the same dotted names: "fc1.weight" becomes the parameter "weight" of an
// empty child module "fc1". So the optimizer, Module::to(device), ParameterCount, channels_last
// (set_data on the shared tensor) and torch::serialize all act on the weights the jit forward
// reads, and the wrapper's named_parameters()/named_buffers() equal the jit module's.
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/script.h>
#include <torch/torch.h>

#include "models/model_file.h"
#include "models/models.h"

namespace runx::models {
namespace {

class TorchScriptModel : public Model {
 public:
  TorchScriptModel(torch::jit::Module module, std::string path, bool optimize, PlacedConstants constants)
      : module_(std::move(module)), path_(std::move(path)), optimize_(optimize), constants_(constants) {
    std::set<const void*> seen;  // a tensor reachable under two names is registered once
    for (const auto& p : module_.named_parameters(/*recurse=*/true)) {
      if (!seen.insert(p.value.unsafeGetTensorImpl()).second) continue;
      auto [owner, leaf] = Owner(p.name);
      owner->register_parameter(leaf, p.value, p.value.requires_grad());
    }
    for (const auto& b : module_.named_buffers(/*recurse=*/true)) {
      if (!seen.insert(b.value.unsafeGetTensorImpl()).second) continue;
      auto [owner, leaf] = Owner(b.name);
      owner->register_buffer(leaf, b.value);
    }
    train(true);
  }

  torch::Tensor forward(torch::Tensor x) override {
    // The executor's setting is thread-local and read at every call: set for this call only.
    const bool before = torch::jit::getGraphExecutorOptimize();
    torch::jit::setGraphExecutorOptimize(optimize_);
    c10::IValue out;
    try {
      out = module_.forward({std::move(x)});
    } catch (...) {
      torch::jit::setGraphExecutorOptimize(before);
      throw;
    }
    torch::jit::setGraphExecutorOptimize(before);
    if (!out.isTensor())
      throw std::invalid_argument("torchscript model '" + path_ + "': forward returned " + out.tagKind() +
                                  ", expected a tensor of logits [batch, num_classes]");
    return out.toTensor();
  }

  void train(bool on = true) override {
    Model::train(on);
    // Modules scripted in Python carry a `training` attribute; one built in C++ may not, and
    // jit::Module::train asserts on it.
    if (module_.hasattr("training")) module_.train(on);
  }

  const std::string& path() const { return path_; }

  std::vector<std::pair<std::string, std::string>> Facts() const override {
    return {{"torchscript.executor", optimize_ ? "optimizing" : "interpreter"},
            {"torchscript.host_constants", std::to_string(constants_.found)},
            {"torchscript.host_constants_moved", std::to_string(constants_.moved)}};
  }

 private:
  /// The module that owns the dotted `name` ("a.b.weight" -> child "b" of child "a"), created on
  /// first use, and the last component.
  std::pair<torch::nn::Module*, std::string> Owner(const std::string& name) {
    torch::nn::Module* owner = this;
    std::string prefix;
    size_t start = 0;
    for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', start)) {
      const std::string part = name.substr(start, dot - start);
      prefix += (prefix.empty() ? "" : ".") + part;
      auto it = children_.find(prefix);
      if (it == children_.end()) {
        auto child = std::make_shared<torch::nn::Module>("TorchScript." + prefix);
        owner->register_module(part, child);
        it = children_.emplace(prefix, child).first;
      }
      owner = it->second.get();
      start = dot + 1;
    }
    return {owner, name.substr(start)};
  }

  torch::jit::Module module_;
  std::string path_;
  bool optimize_;  ///< TorchScript's optimizing graph executor (model.jit_optimize), else the plain interpreter
  PlacedConstants constants_;
  std::map<std::string, std::shared_ptr<torch::nn::Module>> children_;
};

void VisitNodes(torch::jit::Block* block, const std::function<void(torch::jit::Node*)>& visit) {
  for (torch::jit::Node* node : block->nodes()) {
    visit(node);
    for (torch::jit::Block* inner : node->blocks()) VisitNodes(inner, visit);
  }
}

}  // namespace

PlacedConstants PlaceIntegerScalarConstants(torch::jit::Module& module, c10::Device where) {
  PlacedConstants placed;
  // Every function of the file's compilation unit: the methods of the module and its submodules
  // (a trace calls them through prim::CallMethod) and free functions a scripted module calls.
  for (torch::jit::Function* fn : module._ivalue()->compilation_unit()->get_functions()) {
    torch::jit::GraphFunction* graph_fn = torch::jit::tryToGraphFunction(*fn);
    if (graph_fn == nullptr) continue;
    VisitNodes(graph_fn->graph()->block(), [&](torch::jit::Node* node) {
      if (node->kind() != c10::prim::Constant || !node->hasAttribute(c10::attr::value) ||
          node->kindOf(c10::attr::value) != torch::jit::AttributeKind::t)
        return;
      const at::Tensor& value = node->t(c10::attr::value);
      if (value.dim() != 0 || !c10::isIntegralType(value.scalar_type(), /*includeBool=*/true)) return;
      ++placed.found;
      if (value.device() == where) return;
      node->t_(c10::attr::value, value.to(where));
      ++placed.moved;
    });
  }
  return placed;
}

std::shared_ptr<Model> LoadTorchScript(const nlohmann::json& model, const SampleSpec& input, int64_t num_classes,
                                       c10::Device device) {
  if (!model.contains("path") || !model.at("path").is_string())
    throw std::invalid_argument("model 'torchscript' needs 'path', the file saved by torch.jit.save");
  const std::string path = model.at("path").get<std::string>();
  RequireModelFile("torchscript", path);
  torch::jit::Module module;
  try {
    // Onto the trial's device: a frozen module's weights are constants, which Module::to cannot move.
    module = torch::jit::load(path, device);
  } catch (const c10::Error& e) {
    throw std::invalid_argument("torchscript model '" + path + "' cannot be loaded: " + e.what_without_backtrace());
  }
  // ...except the shape arithmetic's integer scalars, which belong on the host: see models.h.
  const PlacedConstants placed = PlaceIntegerScalarConstants(module, c10::Device(c10::DeviceType::CPU));
  auto wrapper =
      std::make_shared<TorchScriptModel>(std::move(module), path, model.value("jit_optimize", false), placed);

  // The contract: [batch, *sample_shape] -> logits [batch, num_classes] for float samples; token
  // ids [batch, seq_len] -> [batch, seq_len, vocabulary] for a language model. Checked once, in
  // eval mode (a training-mode forward would update batch-norm statistics) and without gradients,
  // on zeros of the samples' dtype (token id 0 is in every vocabulary).
  std::vector<int64_t> in_shape{2};
  in_shape.insert(in_shape.end(), input.input_shape.begin(), input.input_shape.end());
  std::vector<int64_t> want{2};
  want.insert(want.end(), input.target_shape.begin(), input.target_shape.end());
  want.push_back(num_classes);
  const bool tokens = input.tokens();
  const std::string in_text = tokens ? "token ids [batch, seq_len] = " + ShapeText(in_shape) + " (" +
                                           std::string(c10::toString(input.input_dtype)) + ")"
                                     : "input [batch, *sample_shape] = " + ShapeText(in_shape);
  torch::Tensor out;
  {
    torch::NoGradGuard no_grad;
    wrapper->eval();
    try {
      out = wrapper->forward(torch::zeros(in_shape, torch::TensorOptions().device(device).dtype(input.input_dtype)));
    } catch (const std::invalid_argument&) {
      wrapper->train();
      throw;
    } catch (const std::exception& e) {
      wrapper->train();
      const c10::Error* ce = dynamic_cast<const c10::Error*>(&e);
      throw std::invalid_argument("torchscript model '" + path + "' fails on " +
                                  (tokens ? in_text : "input " + ShapeText(in_shape) + " ([batch, *sample_shape])") +
                                  ": " + (ce ? ce->what_without_backtrace() : e.what()));
    }
    wrapper->train();
  }
  if (out.sizes() != c10::IntArrayRef(want))
    throw std::invalid_argument("torchscript model '" + path + "' must map " + in_text + " to logits " +
                                (tokens ? "[batch, seq_len, vocabulary] = " : "[batch, num_classes] = ") +
                                ShapeText(want) + ", got " + ShapeText(out.sizes().vec()));
  if (!out.is_floating_point())
    throw std::invalid_argument("torchscript model '" + path + "' must return floating-point logits, got " +
                                std::string(c10::toString(out.scalar_type())));
  return wrapper;
}

}  // namespace runx::models
