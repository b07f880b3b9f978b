// compiled_step's binding: the model's parameters and buffers fed to the package in its sidecar's
// order, and the package's outputs put back (buffer updates into the buffers, gradients as .grad).
// The package here is a reference step computed eagerly on a twin of the model, which is what
// tools/compile_step.py traces and compiles; so a model trained through the binding must end
// bit-equal to the same model trained by the eager loop, whatever order the sidecar lists, and a
// wrongly mapped gradient or buffer must show in the weights. (The AOTInductor package itself runs
// on the GPU machine only: bench/compiled-correctness.sh.)
#include <algorithm>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "../../plugins/compiled_step/binding.h"
#include "models/models.h"

namespace runx {
namespace {

using compiled_step::Binding;
using compiled_step::Sidecar;

compiled_step::Slot SlotOf(const std::string& kind, const std::string& name, const torch::Tensor& t) {
  return {kind, name, t.sizes().vec(), t.strides().vec(), compiled_step::DtypeName(t)};
}

/// The sidecar compile_step.py writes: parameters, buffers, input, target; then the buffer
/// updates, the loss and the gradients.
Sidecar SidecarOf(torch::nn::Module& model, const Batch& batch) {
  Sidecar s;
  for (const auto& p : model.named_parameters()) s.inputs.push_back(SlotOf("parameter", p.key(), p.value()));
  for (const auto& b : model.named_buffers()) s.inputs.push_back(SlotOf("buffer", b.key(), b.value()));
  s.inputs.push_back(SlotOf("input", "input", batch.input));
  s.inputs.push_back(SlotOf("target", "target", batch.target));
  for (const auto& b : model.named_buffers()) s.outputs.push_back(SlotOf("buffer_update", b.key(), b.value()));
  s.outputs.push_back(SlotOf("loss", "loss", torch::zeros({})));
  for (const auto& p : model.named_parameters()) s.outputs.push_back(SlotOf("gradient", p.key(), p.value()));
  return s;
}

/// What the package computes, eagerly on a twin of the model: the inputs loaded into the twin by
/// the sidecar's names; forward in train mode (BatchNorm updates its running statistics),
/// cross-entropy, backward; the outputs in the sidecar's order.
struct ReferenceStep {
  const Sidecar& sidecar;
  models::Model& twin;
  std::vector<const void*> fed;  ///< each input's storage at the last call

  std::vector<torch::Tensor> operator()(std::vector<torch::Tensor>& in) {
    auto params = twin.named_parameters();
    auto buffers = twin.named_buffers();
    torch::Tensor x, y;
    fed.clear();
    for (size_t i = 0; i < in.size(); ++i) {
      const auto& slot = sidecar.inputs[i];
      fed.push_back(in[i].data_ptr());
      if (slot.kind == "parameter")
        params[slot.name].detach().copy_(in[i]);
      else if (slot.kind == "buffer")
        buffers[slot.name].copy_(in[i]);
      else if (slot.kind == "input")
        x = in[i];
      else
        y = in[i];
    }
    torch::AutoGradMode grad(true);
    twin.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(twin.forward(x), y);
    loss.backward();
    std::vector<torch::Tensor> out;
    for (const auto& slot : sidecar.outputs) {
      if (slot.kind == "buffer_update")
        out.push_back(buffers[slot.name].clone());
      else if (slot.kind == "gradient")
        out.push_back(params[slot.name].grad().clone());
      else
        out.push_back(loss.detach());
    }
    return out;
  }
};

/// How a bound run differs from the plain one.
struct BoundRun {
  std::function<void(Sidecar&)> order;              ///< the package's own order of inputs and outputs
  std::function<void(Sidecar&)> mislabel;           ///< what the sidecar gets wrong about the package
  std::function<void(torch::nn::Module&)> between;  ///< after the first step
  std::vector<const void*>* fed = nullptr;          ///< each input's storage at the last step
};

class CompiledStepBinding : public ::testing::Test {
 protected:
  static std::shared_ptr<models::Model> Model() {
    torch::manual_seed(0);
    return models::MakeResNet(18, 3, 10);
  }
  static std::vector<Batch> Batches(int n) {
    torch::manual_seed(1);
    std::vector<Batch> batches;
    for (int i = 0; i < n; ++i)
      batches.push_back({torch::randn({4, 3, 16, 16}), torch::randint(0, 10, {4}, torch::kLong)});
    return batches;
  }
  static torch::optim::SGD Sgd(torch::nn::Module& m) {
    return torch::optim::SGD(m.parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  }

  /// The eager loop's model and losses after `batches`, with `between(model)` after the first step.
  static std::pair<std::shared_ptr<models::Model>, std::vector<float>> Eager(
      const std::vector<Batch>& batches, const std::function<void(torch::nn::Module&)>& between = {}) {
    auto model = Model();
    auto sgd = Sgd(*model);
    std::vector<float> losses;
    for (const auto& b : batches) {
      sgd.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model->forward(b.input), b.target);
      loss.backward();
      sgd.step();
      losses.push_back(loss.item<float>());
      if (between && losses.size() == 1) between(*model);
    }
    return {model, losses};
  }

  /// The same through the binding and the reference step.
  static std::pair<std::shared_ptr<models::Model>, std::vector<float>> Bound(const std::vector<Batch>& batches,
                                                                             const BoundRun& setup = {}) {
    auto model = Model(), twin = Model();
    Sidecar package = SidecarOf(*model, batches.front());
    if (setup.order) setup.order(package);
    Sidecar sidecar = package;
    if (setup.mislabel) setup.mislabel(sidecar);
    Binding binding(sidecar, *model);
    ReferenceStep reference{package, *twin, {}};
    auto sgd = Sgd(*model);
    std::vector<float> losses;
    for (const auto& b : batches) {
      sgd.zero_grad();
      auto loss = binding.Step(b, std::ref(reference));
      sgd.step();
      losses.push_back(loss.item<float>());
      if (setup.between && losses.size() == 1) setup.between(*model);
    }
    if (setup.fed) *setup.fed = reference.fed;
    return {model, losses};
  }

  /// The names of the tensors that differ between `a` and `b` (parameters, then buffers).
  static std::vector<std::string> Differing(torch::nn::Module& a, torch::nn::Module& b) {
    std::vector<std::string> names;
    auto pb = b.named_parameters();
    for (const auto& p : a.named_parameters())
      if (!torch::equal(p.value(), pb[p.key()])) names.push_back(p.key());
    auto bb = b.named_buffers();
    for (const auto& t : a.named_buffers())
      if (!torch::equal(t.value(), bb[t.key()])) names.push_back(t.key());
    return names;
  }
};

TEST_F(CompiledStepBinding, TrainsTheModelBitForBitAsTheEagerLoopDoesInAnyOrderTheSidecarLists) {
  const auto batches = Batches(3);
  auto [eager, eager_losses] = Eager(batches);
  auto [bound, bound_losses] = Bound(batches);
  EXPECT_EQ(bound_losses, eager_losses);
  EXPECT_EQ(Differing(*bound, *eager), std::vector<std::string>{});
  // the steps moved the weights and the BatchNorm statistics (three batches counted)
  EXPECT_FALSE(torch::equal(bound->named_parameters()["conv1.weight"], Model()->named_parameters()["conv1.weight"]));
  EXPECT_EQ(bound->named_buffers()["bn1.num_batches_tracked"].item<int64_t>(), 3);

  BoundRun reversed_order;
  reversed_order.order = [](Sidecar& s) {
    std::reverse(s.inputs.begin(), s.inputs.end());
    std::reverse(s.outputs.begin(), s.outputs.end());
  };
  auto [reversed, reversed_losses] = Bound(batches, reversed_order);
  EXPECT_EQ(reversed_losses, eager_losses);
  EXPECT_EQ(Differing(*reversed, *eager), std::vector<std::string>{});
}

TEST_F(CompiledStepBinding, AGradientOrBufferUpdateMappedToTheWrongTensorShowsInTheWeights) {
  const auto batches = Batches(3);
  auto eager = Eager(batches).first;
  const auto swap = [](std::vector<compiled_step::Slot>& slots, const std::string& a, const std::string& b) {
    for (auto& s : slots)
      if (s.name == a)
        s.name = b;
      else if (s.name == b)
        s.name = a;
  };
  // two tensors of one shape, so nothing but the values can tell
  BoundRun grad_swapped, stats_swapped;
  grad_swapped.mislabel = [&](Sidecar& s) { swap(s.outputs, "bn1.weight", "bn1.bias"); };
  stats_swapped.mislabel = [&](Sidecar& s) { swap(s.outputs, "bn1.running_mean", "bn1.running_var"); };
  auto grads = Bound(batches, grad_swapped).first;
  const auto moved = Differing(*grads, *eager);
  EXPECT_NE(std::find(moved.begin(), moved.end(), "bn1.weight"), moved.end());
  EXPECT_NE(std::find(moved.begin(), moved.end(), "fc.weight"), moved.end());  // and, through the forward, the rest
  auto stats = Bound(batches, stats_swapped).first;
  const auto differ = Differing(*stats, *eager);
  EXPECT_NE(std::find(differ.begin(), differ.end(), "bn1.running_mean"), differ.end());
}

TEST_F(CompiledStepBinding, FollowsATensorWhoseStorageATechniqueReplaced) {
  const auto batches = Batches(3);
  const auto replace = [](torch::nn::Module& m) {  // as channels_last does with set_data
    torch::NoGradGuard no_grad;
    for (auto& p : m.parameters()) p.set_data(p.detach().clone());
  };
  auto eager = Eager(batches, replace).first;
  std::vector<const void*> fed;
  BoundRun setup;
  setup.between = replace;
  setup.fed = &fed;
  auto bound = Bound(batches, setup).first;
  EXPECT_EQ(Differing(*bound, *eager), std::vector<std::string>{});
  ASSERT_EQ(bound->named_parameters().keys().front(), "conv1.weight");  // the sidecar's first input
  EXPECT_EQ(fed.front(), bound->named_parameters()["conv1.weight"].data_ptr());
}

TEST_F(CompiledStepBinding, ABatchOrOutputThatDoesNotFitTheSidecarIsNamedWithBothSides) {
  auto model = Model(), twin = Model();
  const auto batches = Batches(1);
  const Sidecar sidecar = SidecarOf(*model, batches.front());
  ReferenceStep reference{sidecar, *twin, {}};
  Binding binding(sidecar, *model);
  const Batch wide{torch::randn({4, 3, 32, 32}), batches.front().target};
  try {
    binding.Step(wide, std::ref(reference));
    ADD_FAILURE() << "a 32x32 batch ran a package compiled for 16x16";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the batch's input is float32 [4, 3, 32, 32] strides [3072, 1024, 32, 1], the "
                                         "package expects float32 [4, 3, 16, 16] strides [768, 256, 16, 1]"),
              std::string::npos)
        << e.what();
  }
  const auto short_by_one = [&](std::vector<torch::Tensor>& in) {
    auto out = reference(in);
    out.pop_back();
    return out;
  };
  try {
    binding.Step(batches.front(), short_by_one);
    ADD_FAILURE() << "a missing output went unnoticed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the package returned 122 outputs, its sidecar lists 123"), std::string::npos)
        << e.what();
  }
  Sidecar foreign = sidecar;
  foreign.inputs.front().name = "stem.weight";
  try {
    Binding unbound(foreign, *model);
    ADD_FAILURE() << "a parameter the model lacks was bound";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "compiled_step: the sidecar's parameter 'stem.weight' is not one of the model's parameters");
  }
}

}  // namespace
}  // namespace runx
