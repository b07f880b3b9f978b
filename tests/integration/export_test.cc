// The export technique through the real runx binary: a TorchScript model written here, trained on
// synthetic data, exported; the files are loaded back and must hold the TRAINED weights.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <torch/script.h>
#include <torch/torch.h>

#include "../jit_linear.h"
#include "../remove_tree.h"
#include "models/models.h"
#include "run_util.h"

namespace {
namespace fs = std::filesystem;

using runx::testing::Runx;

class Export : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_export_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    db_ = (dir_ / "runx.db").string();
    setenv("RUNX_ARTIFACT_DIR", (dir_ / "artifacts").c_str(), 1);
  }
  void TearDown() override { unsetenv("RUNX_ARTIFACT_DIR"); }

  /// A 2-layer MLP 8 -> 16 -> 4, saved with torch::jit::Module::save.
  std::string WriteModule() {
    torch::manual_seed(3);
    torch::jit::Module m("Net");
    m.register_attribute("training", c10::BoolType::get(), true);
    m.register_module("fc1", runx::testing::JitLinear("Fc1", 8, 16));
    m.register_module("fc2", runx::testing::JitLinear("Fc2", 16, 4));
    m.define("def forward(self, x):\n  return self.fc2.forward(torch.relu(self.fc1.forward(x)))\n");
    for (auto p : m.parameters()) p.set_requires_grad(true);
    const auto path = (dir_ / "net.pt").string();
    m.save(path);
    return path;
  }

  std::string Experiment(const std::string& model) {
    const auto p = dir_ / "export.yaml";
    std::ofstream(p) << "name: export\n"
                        "device: cpu\n"
                        "model: "
                     << model
                     << "\n"
                        "data: {source: synthetic, shape: [8], num_classes: 4, batch_size: 16}\n"
                        "train:\n"
                        "  optimizer: {name: sgd, lr: 0.5}\n"
                        "  warmup_steps: 1\n"
                        "  steps: 10\n"
                        "optimizations: {export: {}}\n";
    return p.string();
  }

  /// The trial's environment value for `key`.
  std::string Env(const std::string& key) {
    SQLite::Database db(db_);
    SQLite::Statement q(db, "SELECT value FROM environment WHERE trial_id IS NOT NULL AND key = ?");
    q.bind(1, key);
    return q.executeStep() ? q.getColumn(0).getString() : std::string();
  }

  fs::path dir_;
  std::string db_;
};

torch::Tensor FixedInput() { return torch::linspace(-2.0, 2.0, 6 * 8).reshape({6, 8}); }

torch::Tensor Forward(torch::jit::Module m, const torch::Tensor& x) {
  torch::NoGradGuard g;
  return m.forward({x}).toTensor();
}

torch::Tensor Forward(runx::models::Model& m, const torch::Tensor& x) {
  torch::NoGradGuard g;
  m.eval();
  return m.forward(x);
}

TEST_F(Export, TorchScriptModelExportsTrainedWeightsAndFrozenModule) {
  const auto file = WriteModule();
  auto r = Runx(Experiment("{name: torchscript, path: " + file + "}") + " --db " + db_);
  ASSERT_EQ(r.status, 0) << r.out;
  {
    SQLite::Database db(db_);
    EXPECT_EQ(db.execAndGet("SELECT status FROM trials").getString(), "ok");
    EXPECT_EQ(db.execAndGet("SELECT value FROM metrics WHERE name = 'param_count'").getDouble(),
              8 * 16 + 16 + 16 * 4 + 4);
  }
  const auto weights = Env("export.weights"), frozen_path = Env("export.torchscript");
  ASSERT_FALSE(weights.empty()) << r.out;
  ASSERT_FALSE(frozen_path.empty()) << r.out;
  EXPECT_EQ(fs::path(weights).filename(), "weights.pt");
  EXPECT_EQ(fs::path(frozen_path).filename(), "model.frozen.pt");
  EXPECT_EQ(fs::path(weights).parent_path(), fs::path(Env("artifact_dir")));
  EXPECT_EQ(fs::path(weights).parent_path().parent_path().parent_path(), dir_ / "artifacts");

  const auto x = FixedInput();
  auto frozen = torch::jit::load(frozen_path);
  const auto from_frozen = Forward(frozen, x);

  // weights.pt into a fresh wrapper of the untrained file: the same function as the frozen module.
  auto fresh = runx::models::BuildModel({{"name", "torchscript"}, {"path", file}}, {8}, 4);
  const auto initial = Forward(*fresh, x);
  torch::serialize::InputArchive archive;
  archive.load_from(weights);
  fresh->load(archive);
  const auto from_weights = Forward(*fresh, x);
  EXPECT_TRUE(torch::allclose(from_frozen, from_weights, 1e-5, 1e-6)) << from_frozen << from_weights;
  // ... and not the untrained module's (the export is not of the file as it was).
  EXPECT_TRUE(torch::allclose(initial, Forward(torch::jit::load(file), x)));
  EXPECT_GT((from_frozen - initial).abs().max().item<double>(), 1e-3);
}

TEST_F(Export, BuiltInModelExportsWeightsThatLoadIntoBuildModel) {
  auto r = Runx(Experiment("{name: mlp, hidden: [12]}") + " --db " + db_);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto weights = Env("export.weights");
  ASSERT_FALSE(weights.empty()) << r.out;
  EXPECT_EQ(Env("export.torchscript"), "");
  EXPECT_FALSE(fs::exists(fs::path(weights).parent_path() / "model.frozen.pt"));

  // runx seeds the model with the experiment's seed (0): this is the untrained model of the trial.
  const nlohmann::json spec{{"name", "mlp"}, {"hidden", {12}}};
  torch::manual_seed(0);
  auto initial = runx::models::BuildModel(spec, {8}, 4);
  torch::manual_seed(99);
  auto a = runx::models::BuildModel(spec, {8}, 4), b = runx::models::BuildModel(spec, {8}, 4);
  for (auto* m : {&a, &b}) {
    torch::serialize::InputArchive archive;
    archive.load_from(weights);
    (*m)->load(archive);
  }
  const auto x = FixedInput();
  EXPECT_TRUE(torch::equal(Forward(*a, x), Forward(*b, x)));                            // the file fixes every weight
  EXPECT_GT((Forward(*a, x) - Forward(*initial, x)).abs().max().item<double>(), 1e-3);  // trained ones

  // A frozen TorchScript export of a built-in model is refused before the trial runs.
  auto refused =
      Runx(Experiment("{name: mlp, hidden: [12]}") + " --db " + db_ + " --set optimizations.export.format=torchscript");
  SQLite::Database db(db_);
  SQLite::Statement q(db, "SELECT status, error FROM trials ORDER BY rowid DESC LIMIT 1");
  ASSERT_TRUE(q.executeStep()) << refused.out;
  EXPECT_EQ(q.getColumn(0).getString(), "incompatible") << refused.out;
  EXPECT_NE(q.getColumn(1).getString().find("cannot be scripted: use format: weights"), std::string::npos)
      << q.getColumn(1).getString();
}

}  // namespace
