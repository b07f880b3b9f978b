// model: {name: python}: a user's model.py with a builder, through the real runx binary and Debian's
// PyTorch (/usr/bin/python3): `runx compile` makes its TorchScript file beside the store, `runx`
// trains it; an edited model.py is another trial, refused until compiled again and then measured,
// not reused; a builder that is neither scriptable nor traceable, and a missing file, say so.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "store_fixture.h"

namespace {

namespace fs = std::filesystem;
using runx::testing::Runx;
using runx::testing::Shell;

constexpr const char* kPython = "/usr/bin/python3";

class PythonModel : public runx::testing::StoreFixture {
 protected:
  PythonModel() : StoreFixture("runx_python_model") {}

  void SetUp() override {
    StoreFixture::SetUp();
    const auto probe = Shell(std::string(kPython) + " -c 'import torch'");
    if (probe.status != 0) GTEST_SKIP() << kPython << " cannot import torch: " << probe.out;
  }
  /// model.py: a two-layer MLP builder over [3, 8, 8] samples, `hidden` wide; and `unusable`, whose
  /// forward neither scripts (a lambda) nor traces (it returns dict keys, not tensors).
  void WriteModel(int hidden) {
    std::ofstream(dir_ / "model.py")
        << "import torch\nfrom torch import nn\n\n"
           "def build(num_classes=10, hidden="
        << hidden
        << "):\n"
           "    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, hidden), nn.ReLU(),\n"
           "                         nn.Linear(hidden, num_classes))\n\n"
           "class Unusable(nn.Module):\n"
           "    def __init__(self):\n"
           "        super().__init__()\n"
           "        self.fc = nn.Linear(192, 10)\n"
           "    def forward(self, x):\n"
           "        twice = lambda t: t * 2\n"
           "        return {'logits': twice(self.fc(x.flatten(1)))}.keys()\n\n"
           "def unusable(num_classes=10):\n"
           "    return Unusable()\n";
  }
  std::string Experiment(const std::string& builder = "build") {
    const auto p = dir_ / "py.yaml";
    std::ofstream(p) << "name: py\ndevice: cpu\nmodel: {name: python, path: " << (dir_ / "model.py").string()
                     << ", builder: " << builder
                     << ", kwargs: {num_classes: 10}}\n"
                        "data: {source: synthetic, shape: [3, 8, 8], num_classes: 10, batch_size: 4}\n"
                        "train: {warmup_steps: 1, steps: 3, eval: false}\n";
    return p.string();
  }
  runx::testing::Result Compile(const std::string& file) {
    return Runx("compile " + file + " --db " + db_ + " --python " + kPython);
  }
  /// Runs `file` without --force: a trial already measured is reused.
  runx::testing::Result RunFile(const std::string& file) { return Runx(file + " --db " + db_ + " -q"); }
  std::string Query(const std::string& sql) {
    std::string out = Runx("query --db " + db_ + " --format csv \"" + sql + "\"").out;
    out.erase(std::remove(out.begin(), out.end(), '\r'), out.end());  // CSV's line ends are CRLF
    return out;
  }
  std::vector<fs::path> Artifacts() {
    std::vector<fs::path> found;
    if (!fs::exists(dir_ / "compiled")) return found;
    for (const auto& e : fs::directory_iterator(dir_ / "compiled"))
      if (e.path().string().size() > 6 && e.path().string().substr(e.path().string().size() - 6) == ".ts.pt")
        found.push_back(e.path());
    return found;
  }
};

TEST_F(PythonModel, CompileMakesTheTorchScriptFileAndAnEditedSourceIsRemeasuredNotReused) {
  WriteModel(16);
  const std::string file = Experiment();
  const auto made = Compile(file);
  ASSERT_EQ(made.status, 0) << made.out;
  EXPECT_NE(made.out.find("compile: 1 TorchScript file of python models for 1 trial of " + file), std::string::npos)
      << made.out;
  ASSERT_EQ(Artifacts().size(), 1u) << made.out;
  const fs::path first = Artifacts()[0];
  EXPECT_EQ(first.filename().string().rfind("model-build-", 0), 0u) << first;
  EXPECT_TRUE(fs::exists(first.string() + ".json"));
  EXPECT_NE(made.out.find("compile: made " + first.string()), std::string::npos) << made.out;
  EXPECT_EQ(Compile(file).out.find("compile: made"), std::string::npos);  // present: nothing to make again

  auto run = RunFile(file);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(Query("SELECT status, error FROM trials ORDER BY id"), "status,error\nok,\n");
  const std::string hash1 = Query("SELECT config_hash FROM trials WHERE status = 'ok'");
  // The trial ran the TorchScript file, and records it; its source counts by content.
  EXPECT_NE(Query("SELECT json_extract(config_json, '$.model.artifact') FROM trials").find(first.string()),
            std::string::npos);
  EXPECT_NE(Query("SELECT json_extract(inputs, '$.\\\"model.path\\\".sha256') FROM trials")
                .find(Shell("sha256sum " + (dir_ / "model.py").string() + " | cut -c1-64").out.substr(0, 64)),
            std::string::npos)
      << Query("SELECT inputs FROM trials");
  EXPECT_EQ(Query("SELECT value FROM metrics WHERE name = 'param_count'"),
            "value\n" + std::to_string(192 * 16 + 16 + 16 * 10 + 10) + "\n");
  // Run again: the same trial, reused.
  run = RunFile(file);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(Query("SELECT count(*) FROM trials"), "count(*)\n1\n");

  // model.py edited: another trial, refused until compiled again, with the command.
  WriteModel(24);
  run = RunFile(file);
  EXPECT_EQ(Query("SELECT status FROM trials ORDER BY id DESC LIMIT 1"), "status\nincompatible\n") << run.out;
  const std::string error = Query("SELECT error FROM trials ORDER BY id DESC LIMIT 1");
  EXPECT_NE(error.find("model 'python': no TorchScript file of " + (dir_ / "model.py").string() +
                       ":build for this "
                       "trial at " +
                       (dir_ / "compiled" / "model-build-").string()),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("make it with `runx compile " + file + "`"), std::string::npos) << error;
  EXPECT_NE(error.find("python3 " + std::string(RUNX_SOURCE_DIR) + "/tools/compile_step.py --module " +
                       (dir_ / "model.py").string() +
                       ":build --builder-kwargs '{\"\"num_classes\"\":10}' --shape 3,8,8 --torchscript "),
            std::string::npos)
      << error;  // (csv doubles the quotes)

  ASSERT_EQ(Compile(file).status, 0);
  ASSERT_EQ(Artifacts().size(), 2u);
  run = RunFile(file);
  ASSERT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(Query("SELECT status FROM trials ORDER BY id DESC LIMIT 1"), "status\nok\n");
  const std::string hash2 = Query("SELECT config_hash FROM trials ORDER BY id DESC LIMIT 1");
  EXPECT_NE(hash2, hash1);
  EXPECT_EQ(Query("SELECT count(*) FROM trials WHERE status = 'ok'"), "count(*)\n2\n");
  EXPECT_EQ(Query("SELECT reused FROM run_trials WHERE run_id = (SELECT max(id) FROM runs)"), "reused\n0\n");
  EXPECT_EQ(Query("SELECT value FROM metrics WHERE name = 'param_count' ORDER BY trial_id DESC LIMIT 1"),
            "value\n" + std::to_string(192 * 24 + 24 + 24 * 10 + 10) + "\n");
}

TEST_F(PythonModel, ABuilderThatCannotBeScriptedNorTracedIsAClearError) {
  WriteModel(16);
  const std::string file = Experiment("unusable");
  const auto r = Compile(file);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("runx: error: " + (dir_ / "model.py").string() +
                       ":unusable cannot be made into TorchScript: torch.jit.script: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("torch.jit.trace: RuntimeError: Tracer cannot infer type of dict_keys"), std::string::npos)
      << r.out;
  EXPECT_TRUE(Artifacts().empty());
  // Nothing half-made is left beside the store.
  for (const auto& e : fs::directory_iterator(dir_ / "compiled"))
    EXPECT_EQ(e.path().filename().string().rfind(".partial", 0), std::string::npos) << e.path();
}

TEST_F(PythonModel, AMissingArtifactIsIncompatibleWithTheCommand) {
  WriteModel(16);
  const std::string file = Experiment();
  const auto dry = Runx("compile " + file + " --db " + db_ + " --dry-run");
  EXPECT_EQ(dry.status, 0) << dry.out;
  EXPECT_NE(dry.out.find("  missing  " + (dir_ / "compiled" / "model-build-").string()), std::string::npos) << dry.out;
  EXPECT_TRUE(Artifacts().empty());
  RunFile(file);
  EXPECT_EQ(Query("SELECT status FROM trials"), "status\nincompatible\n");
  EXPECT_NE(Query("SELECT error FROM trials").find("yet (key "), std::string::npos);
  EXPECT_NE(Query("SELECT error FROM trials").find("make it with `runx compile " + file + "`"), std::string::npos);
  // A model file that is not there is said as such.
  fs::remove(dir_ / "model.py");
  RunFile(file);
  EXPECT_NE(Query("SELECT error FROM trials ORDER BY id DESC LIMIT 1")
                .find("model 'python' needs its source " + (dir_ / "model.py").string() + ": cannot read"),
            std::string::npos)
      << Query("SELECT error FROM trials");
}

}  // namespace
