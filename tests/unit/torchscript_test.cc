// TorchScript models (models/torchscript.cc) and the export plugin (the real libexport.so).
// The TorchScript file is built here in C++: a 2-layer MLP 8 -> 16 -> 4 with a buffer.

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <torch/torch.h>

#include "../jit_linear.h"
#include "../remove_tree.h"
#include "fake_trial.h"
#include "models/models.h"

namespace runx {
namespace {

namespace fs = std::filesystem;

/// Saves the MLP to `path` (seeded: the same file every time); `train_fc1` false saves fc1's
/// parameters with requires_grad false.
void WriteScriptedMlp(const std::string& path, bool train_fc1 = true) {
  torch::manual_seed(7);
  torch::jit::Module m("Net");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_module("fc1", runx::testing::JitLinear("Fc1", 8, 16));
  m.register_module("fc2", runx::testing::JitLinear("Fc2", 16, 4));
  m.register_buffer("scale", torch::full({4}, 2.0));
  m.define("def forward(self, x):\n  return self.fc2.forward(torch.relu(self.fc1.forward(x))) * self.scale\n");
  for (auto p : m.named_parameters()) p.value.set_requires_grad(train_fc1 || p.name.rfind("fc1.", 0) != 0);
  m.save(path);
}

class TorchScript : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_ts_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    file_ = (dir_ / "net.pt").string();
    WriteScriptedMlp(file_);
  }
  void TearDown() override { testing::RemoveTree(dir_.string()); }
  nlohmann::json Spec() const { return {{"name", "torchscript"}, {"path", file_}}; }
  fs::path dir_;
  std::string file_;
};

void Train(models::Model& model, torch::optim::Optimizer& opt, int steps) {
  torch::manual_seed(1);
  for (int i = 0; i < steps; ++i) {
    auto x = torch::randn({16, 8});
    auto y = torch::randint(4, {16}, torch::kLong);
    auto loss = torch::nn::functional::cross_entropy(model.forward(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}

torch::Tensor FixedInput() { return torch::linspace(-2.0, 2.0, 5 * 8).reshape({5, 8}); }

torch::Tensor Eval(models::Model& m, const torch::Tensor& x) {
  torch::NoGradGuard g;
  m.eval();
  auto y = m.forward(x);
  m.train();
  return y;
}

torch::Tensor EvalJit(torch::jit::Module m, const torch::Tensor& x) {
  torch::NoGradGuard g;
  return m.forward({x}).toTensor();
}

TEST_F(TorchScript, LoadsWithTheJitNamesParametersAndBuffers) {
  auto model = models::BuildModel(Spec(), {8}, 4);
  std::vector<std::string> names;
  for (const auto& p : model->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}));
  ASSERT_EQ(model->named_buffers().size(), 1u);
  EXPECT_EQ(model->named_buffers().begin()->key(), "scale");
  EXPECT_EQ(models::ParameterCount(*model), 8 * 16 + 16 + 16 * 4 + 4);
  for (const auto& p : model->parameters()) EXPECT_TRUE(p.requires_grad());

  // The forward is the jit module's: the same as the file's, and as the math on the wrapper's tensors.
  const auto x = FixedInput();
  const auto y = Eval(*model, x);
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{5, 4}));
  EXPECT_TRUE(torch::allclose(y, EvalJit(torch::jit::load(file_), x)));
  auto P = model->named_parameters();
  const auto manual =
      torch::relu(x.matmul(P["fc1.weight"].t()) + P["fc1.bias"]).matmul(P["fc2.weight"].t()) + P["fc2.bias"];
  EXPECT_TRUE(torch::allclose(y, manual * 2.0, 1e-5, 1e-6));
}

TEST_F(TorchScript, TrainingUpdatesTheJitModulesWeights) {
  auto model = models::BuildModel(Spec(), {8}, 4);
  const auto x = FixedInput();
  const auto before = Eval(*model, x);
  const auto w_before = model->named_parameters()["fc1.weight"].clone();
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1));
  Train(*model, opt, 3);
  EXPECT_FALSE(torch::equal(w_before, model->named_parameters()["fc1.weight"]));
  // The jit forward sees the optimizer's updates: the tensors are shared, not copied.
  const auto after = Eval(*model, x);
  EXPECT_GT((after - before).abs().max().item<double>(), 1e-4);
  auto P = model->named_parameters();
  const auto manual =
      (torch::relu(x.matmul(P["fc1.weight"].t()) + P["fc1.bias"]).matmul(P["fc2.weight"].t()) + P["fc2.bias"]) * 2.0;
  EXPECT_TRUE(torch::allclose(after, manual.detach(), 1e-5, 1e-6));
  // Module::to (set_data) reaches the jit module too: a double model runs on double input.
  model->to(torch::kDouble);
  EXPECT_EQ(Eval(*model, x.to(torch::kDouble)).scalar_type(), torch::kDouble);
}

TEST_F(TorchScript, ParametersSavedWithoutGradientsAreNotTrained) {
  WriteScriptedMlp(file_, /*train_fc1=*/false);
  auto model = models::BuildModel(Spec(), {8}, 4);
  auto P = model->named_parameters();
  EXPECT_FALSE(P["fc1.weight"].requires_grad());
  EXPECT_TRUE(P["fc2.weight"].requires_grad());
  const auto fc1 = P["fc1.weight"].clone(), fc2 = P["fc2.weight"].clone();
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1));
  Train(*model, opt, 2);
  EXPECT_TRUE(torch::equal(fc1, P["fc1.weight"]));
  EXPECT_FALSE(torch::equal(fc2, P["fc2.weight"]));
}

TEST_F(TorchScript, ContractViolationsNameTheFileAndShapes) {
  try {
    models::BuildModel(Spec(), {8}, 3);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "torchscript model '" + file_ +
                                         "' must map input [batch, *sample_shape] = [2, 8] to logits "
                                         "[batch, num_classes] = [2, 3], got [2, 4]");
  }
  try {
    models::BuildModel(Spec(), {5}, 4);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("torchscript model '" + file_ + "' fails on input [2, 5]"), std::string::npos)
        << e.what();
  }
  try {
    models::BuildModel({{"name", "torchscript"}, {"path", (dir_ / "missing.pt").string()}}, {8}, 4);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "torchscript model '" + (dir_ / "missing.pt").string() + "' not found");
  }
  std::ofstream(dir_ / "junk.pt") << "not a TorchScript file";
  try {
    models::BuildModel({{"name", "torchscript"}, {"path", (dir_ / "junk.pt").string()}}, {8}, 4);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("junk.pt' cannot be loaded: "), std::string::npos) << e.what();
  }
}

/// A TorchScript language model: token ids [batch, seq_len] -> logits [batch, seq_len, vocab]
/// (an embedding, then a projection onto the vocabulary: it can learn which token follows which).
void WriteTokenModel(const std::string& path, int64_t vocab, int64_t dim) {
  torch::manual_seed(3);
  torch::jit::Module m("TokenNet");
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter("emb", torch::randn({vocab, dim}) * 0.1, false);
  m.register_parameter("out", torch::randn({dim, vocab}) * 0.1, false);
  m.register_parameter("bias", torch::zeros({vocab}), false);
  m.define("def forward(self, x):\n  return torch.matmul(torch.embedding(self.emb, x), self.out) + self.bias\n");
  for (auto p : m.named_parameters()) p.value.set_requires_grad(true);  // as nn.Parameter saves them
  m.save(path);
}

SampleSpec TokenSpec(int64_t seq_len, int64_t vocab) { return {{seq_len}, c10::kLong, {seq_len}, c10::kLong, vocab}; }

// Integer token ids reach a TorchScript model as they are, and it trains as a language model: on
// sequences where each token is followed by the next one (mod vocab), the loss falls far below
// log(vocab), the loss of not knowing.
TEST_F(TorchScript, ATokenModelGetsTokenIdsAndLearnsWhatFollows) {
  const std::string path = (dir_ / "lm.pt").string();
  const int64_t vocab = 32, seq = 12;
  WriteTokenModel(path, vocab, 16);
  auto model = models::BuildModel({{"name", "torchscript"}, {"path", path}}, TokenSpec(seq, vocab));
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(0.05));
  torch::manual_seed(1);
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    const auto start = torch::randint(vocab, {16, 1}, torch::kLong);
    const auto x = (start + torch::arange(seq, torch::kLong)).remainder(vocab);  // [16, seq] token ids
    const auto y = (x + 1).remainder(vocab);
    const auto logits = model->forward(x);
    ASSERT_EQ(logits.sizes(), (c10::IntArrayRef{16, seq, vocab}));
    auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, vocab}), y.reshape({-1}));
    opt.zero_grad();
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_GT(first, 0.9 * std::log(vocab));
  EXPECT_LT(last, 0.2 * std::log(vocab)) << "first " << first;
}

TEST_F(TorchScript, TokenContractViolationsNameTheIdsAndTheLogitsExpected) {
  try {  // the float MLP given token ids
    models::BuildModel(Spec(), TokenSpec(8, 4));
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("torchscript model '" + file_ +
                                         "' fails on token ids [batch, seq_len] = [2, 8] (Long): "),
              std::string::npos)
        << e.what();
  }
  const std::string path = (dir_ / "lm.pt").string();
  WriteTokenModel(path, 32, 8);
  try {  // a vocabulary of 32 where the data has 64
    models::BuildModel({{"name", "torchscript"}, {"path", path}}, TokenSpec(8, 64));
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "torchscript model '" + path +
                                         "' must map token ids [batch, seq_len] = [2, 8] (Long) "
                                         "to logits [batch, seq_len, vocabulary] = [2, 8, 64], got [2, 8, 32]");
  }
}

// A model nobody here wrote: torchvision's VisionTransformer (patch convolution, class token,
// LayerNorm, multi-head attention, GELU), tiny, traced in training mode by torch.jit.trace
// (tests/data/torchscript/make_vit_tiny.py). It loads as it is and trains: on one fixed batch the
// loss falls, every parameter moves, and the jit module's forward sees the new weights.
const std::string kTracedVit = RUNX_SOURCE_DIR "/tests/data/torchscript/vit_tiny_traced.pt";

TEST_F(TorchScript, ATracedVisionTransformerTrains) {
  auto model = models::BuildModel({{"name", "torchscript"}, {"path", kTracedVit}}, {3, 16, 16}, 10);
  auto P = model->named_parameters();
  ASSERT_TRUE(P.contains("encoder.layers.encoder_layer_0.self_attention.in_proj_weight"));
  ASSERT_TRUE(P.contains("encoder.layers.encoder_layer_1.ln_2.weight"));
  ASSERT_TRUE(P.contains("class_token"));
  std::map<std::string, torch::Tensor> before;
  for (const auto& p : P) before[p.key()] = p.value().detach().clone();
  torch::manual_seed(5);
  const auto x = torch::randn({8, 3, 16, 16});
  const auto y = torch::randint(10, {8}, torch::kLong);
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(3e-3));
  double first = 0, last = 0;
  for (int step = 0; step < 40; ++step) {
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<double>();
  }
  EXPECT_LT(last, 0.5 * first) << "first " << first << ", last " << last;
  for (const auto& p : model->named_parameters())
    EXPECT_FALSE(torch::equal(before[p.key()], p.value())) << p.key() << " did not move";
}

/// Where each 0-dim tensor constant of `module`'s graphs lives, by kind: "integer" or "float".
std::map<std::string, std::set<std::string>> ScalarConstantDevices(torch::jit::Module& module) {
  std::map<std::string, std::set<std::string>> where;
  std::function<void(torch::jit::Block*)> visit = [&](torch::jit::Block* block) {
    for (torch::jit::Node* node : block->nodes()) {
      if (node->kind() == c10::prim::Constant && node->hasAttribute(c10::attr::value) &&
          node->kindOf(c10::attr::value) == torch::jit::AttributeKind::t && node->t(c10::attr::value).dim() == 0) {
        const auto& t = node->t(c10::attr::value);
        where[c10::isIntegralType(t.scalar_type(), true) ? "integer" : "float"].insert(t.device().str());
      }
      for (torch::jit::Block* inner : node->blocks()) visit(inner);
    }
  };
  for (torch::jit::Function* fn : module._ivalue()->compilation_unit()->get_functions())
    if (auto* graph_fn = torch::jit::tryToGraphFunction(*fn)) visit(graph_fn->graph()->block());
  return where;
}

// The trace's shape arithmetic (the patch grid h // 4, the heads' batch bsz * num_heads) divides
// and multiplies by 0-dim integer tensor constants, in the submodules' methods. Loaded onto a GPU
// they would make every aten::Int of that arithmetic a device-to-host copy; runx places them on
// the host. No second device here: the meta device stands in for the GPU the module was loaded
// onto, and the check is that exactly those constants move (integer ones; the attention's float
// scale and the parameters stay), and that a second placement finds nothing left to move.
TEST_F(TorchScript, TheShapeArithmeticsIntegerConstantsArePlacedWhereAsked) {
  torch::jit::Module module = torch::jit::load(kTracedVit);
  auto before = ScalarConstantDevices(module);
  ASSERT_EQ(before["integer"], (std::set<std::string>{"cpu"}));
  const auto placed = models::PlaceIntegerScalarConstants(module, c10::Device(c10::DeviceType::Meta));
  EXPECT_GE(placed.moved, 3);  // the patch grid's divisor (per dimension) and the heads' count, at least
  EXPECT_EQ(placed.found, placed.moved);
  auto after = ScalarConstantDevices(module);
  EXPECT_EQ(after["integer"], (std::set<std::string>{"meta"}));
  EXPECT_EQ(after["float"], before["float"]);
  for (const auto& p : module.named_parameters()) EXPECT_TRUE(p.value.device().is_cpu()) << p.name;
  const auto again = models::PlaceIntegerScalarConstants(module, c10::Device(c10::DeviceType::Meta));
  EXPECT_EQ(again.found, placed.found);
  EXPECT_EQ(again.moved, 0);
  // Where they were is where the forward reads them: on meta, the host's arithmetic now fails.
  EXPECT_THROW(module.forward({torch::randn({2, 3, 16, 16})}), c10::Error);
  // LoadTorchScript leaves them on the host, says so in the trial's facts, and the module runs.
  auto model = models::BuildModel({{"name", "torchscript"}, {"path", kTracedVit}}, {3, 16, 16}, 10);
  EXPECT_EQ(model->forward(torch::randn({4, 3, 16, 16})).sizes(), (c10::IntArrayRef{4, 10}));
  const auto facts = model->Facts();
  const std::map<std::string, std::string> fact(facts.begin(), facts.end());
  EXPECT_EQ(fact.at("torchscript.host_constants"), std::to_string(placed.found));
  EXPECT_EQ(fact.at("torchscript.host_constants_moved"), "0");  // loaded onto the CPU: nothing to move
  EXPECT_EQ(fact.at("torchscript.executor"), "interpreter");
}

// The executor the model runs under: by default the plain interpreter, which executes the graph
// as written (here: the submodules' calls not even inlined, no profiling nodes); with jit_optimize
// the optimizing executor, which executes a graph it rewrote (inlined, profiled, decomposed). The
// setting is restored after every forward pass.
TEST_F(TorchScript, RunsInThePlainInterpreterUnlessJitOptimize) {
  std::string executed[2];
  for (const bool optimize : {false, true}) {
    auto spec = Spec();
    if (optimize) spec["jit_optimize"] = true;
    auto model = models::BuildModel(spec, {8}, 4);
    for (int i = 0; i < 3; ++i) model->forward(torch::randn({16, 8})).sum().backward();
    executed[optimize] = torch::jit::lastExecutedOptimizedGraph()->toString();
    EXPECT_TRUE(torch::jit::getGraphExecutorOptimize());
  }
  EXPECT_NE(executed[0].find("prim::CallMethod"), std::string::npos) << executed[0];
  EXPECT_EQ(executed[0].find("prim::profile"), std::string::npos) << executed[0];
  EXPECT_EQ(executed[1].find("prim::CallMethod"), std::string::npos) << executed[1];
}

TEST_F(TorchScript, ExportWritesTrainedWeightsAndAFrozenModule) {
  auto model = models::BuildModel(Spec(), {8}, 4);
  testing::FakeTrial trial({{"model", Spec()}}, model);
  trial.dir = (dir_ / "out").string();
  fs::create_directories(trial.dir);
  trial.shape = {8};
  trial.forward_fn = [&](const torch::Tensor& x) { return model->forward(x); };
  auto exporter = testing::LoadTechnique("export");
  ASSERT_TRUE(testing::Check("export", nlohmann::json::object(), trial.config(), torch::kCPU).ok);
  Train(*model, trial.optimizer(), 5);
  exporter->on_finish(trial);

  ASSERT_EQ(trial.records["export.weights"], trial.dir + "/weights.pt");
  ASSERT_EQ(trial.records["export.torchscript"], trial.dir + "/model.frozen.pt");
  EXPECT_GT(trial.Last("export_weights_bytes"), 0);
  EXPECT_GT(trial.Last("export_torchscript_bytes"), 0);
  EXPECT_LT(trial.Last("export_max_abs_diff"), 1e-5);

  const auto x = FixedInput();
  const auto trained = Eval(*model, x);
  const auto initial = EvalJit(torch::jit::load(file_), x);
  ASSERT_GT((trained - initial).abs().max().item<double>(), 1e-4);  // training moved the weights

  auto frozen = torch::jit::load(trial.records["export.torchscript"]);
  EXPECT_TRUE(frozen.parameters().size() == 0);  // frozen: weights are constants
  EXPECT_TRUE(torch::allclose(EvalJit(frozen, x), trained, 1e-5, 1e-6));

  auto fresh = models::BuildModel(Spec(), {8}, 4);  // the untrained file
  torch::serialize::InputArchive archive;
  archive.load_from(trial.records["export.weights"]);
  fresh->load(archive);
  EXPECT_TRUE(torch::allclose(Eval(*fresh, x), trained, 1e-6, 1e-7));
}

// A language model exported: its frozen module is checked on token ids (ids modulo the vocabulary
// its logits have), not on the float ramp a classifier gets, which an embedding cannot take.
TEST_F(TorchScript, ExportOfATokenModelIsCheckedOnTokenIds) {
  const std::string path = (dir_ / "lm.pt").string();
  WriteTokenModel(path, 32, 8);
  const nlohmann::json spec{{"name", "torchscript"}, {"path", path}};
  auto model = models::BuildModel(spec, TokenSpec(6, 32));
  testing::FakeTrial trial({{"model", spec}, {"data", {{"source", "text"}}}}, model);
  trial.dir = (dir_ / "out").string();
  fs::create_directories(trial.dir);
  trial.shape = {6};
  std::vector<torch::ScalarType> seen;
  trial.forward_fn = [&](const torch::Tensor& x) {
    seen.push_back(x.scalar_type());
    return model->forward(x);
  };
  testing::LoadTechnique("export")->on_finish(trial);
  ASSERT_EQ(trial.records["export.torchscript"], trial.dir + "/model.frozen.pt");
  EXPECT_LT(trial.Last("export_max_abs_diff"), 1e-5);
  ASSERT_FALSE(seen.empty());
  for (auto t : seen) EXPECT_EQ(t, torch::kLong);
  auto frozen = torch::jit::load(trial.records["export.torchscript"]);
  const auto ids = torch::arange(12, torch::kLong).remainder(32).reshape({2, 6});
  EXPECT_TRUE(torch::allclose(EvalJit(frozen, ids), Eval(*model, ids), 1e-5, 1e-6));
}

TEST_F(TorchScript, ExportOfABuiltInModelIsItsWeights) {
  const nlohmann::json spec{{"name", "mlp"}, {"hidden", {12}}};
  auto model = models::BuildModel(spec, {8}, 4);
  testing::FakeTrial trial({{"model", spec}}, model);
  trial.dir = (dir_ / "out").string();
  auto exporter = testing::LoadTechnique("export", {{"optimize", false}});
  Train(*model, trial.optimizer(), 3);
  exporter->on_finish(trial);  // creates the folder
  EXPECT_EQ(trial.records.count("export.torchscript"), 0u);
  EXPECT_FALSE(fs::exists(dir_ / "out" / "model.frozen.pt"));

  torch::manual_seed(123);  // a differently initialized model of the same config
  auto fresh = models::BuildModel(spec, {8}, 4);
  const auto x = FixedInput();
  ASSERT_FALSE(torch::allclose(Eval(*fresh, x), Eval(*model, x)));
  torch::serialize::InputArchive archive;
  archive.load_from(trial.records.at("export.weights"));
  fresh->load(archive);
  EXPECT_TRUE(torch::equal(Eval(*fresh, x), Eval(*model, x)));

  const auto verdict = testing::Check("export", {{"format", "torchscript"}}, trial.config(), torch::kCPU);
  EXPECT_FALSE(verdict.ok);
  EXPECT_NE(verdict.reason.find("'mlp' is a built-in C++ module, which cannot be scripted: use format: weights"),
            std::string::npos)
      << verdict.reason;
}

}  // namespace
}  // namespace runx
