// model: {name: python}: the TorchScript artifact runx compile makes from the builder, named by a
// key over the source's content, the builder, its arguments and the sample shape; the trial's
// identity holds the source's content; `package: auto` names the compiled step of the same builder.
#include "spec/python_model.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "spec/compiled_package.h"
#include "spec/identity.h"

namespace runx::spec {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

class PythonModel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("runx_python_model_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    source_ = (dir_ / "small_cnn.py").string();
    Write("def build(num_classes=10):\n    ...\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& text) { std::ofstream(source_) << text; }

  json Trial() const {
    json t = json::parse(R"({
      "name": "p", "results": "results/runx.db", "device": "cuda", "seed": 0, "precision": "bf16",
      "model": {"name": "python", "builder": "build", "kwargs": {"num_classes": 10}},
      "data": {"source": "synthetic", "shape": [3, 32, 32], "num_classes": 10, "batch_size": 64},
      "train": {"optimizer": {"name": "sgd", "lr": 0.1}, "steps": 40},
      "optimizations": {"channels_last": {}, "compiled_step": {"package": "auto"}}
    })");
    t["model"]["path"] = source_;
    return t;
  }

  fs::path dir_;
  std::string source_;
};

TEST_F(PythonModel, TheArtifactIsNamedBesideTheStoreWithTheCommandThatMakesIt) {
  EXPECT_TRUE(IsPythonModel(Trial()));
  json mlp = Trial();
  mlp["model"] = {{"name", "mlp"}};
  EXPECT_FALSE(IsPythonModel(mlp));
  const auto a = PythonModelArtifact(Trial(), "results/compiled", "2.11.0");
  ASSERT_EQ(a.reason, "");
  ASSERT_EQ(a.key.size(), 16u);
  EXPECT_EQ(a.path, "results/compiled/small_cnn-build-" + a.key + ".ts.pt");
  EXPECT_EQ(a.source, source_ + ":build");
  EXPECT_EQ(TorchScriptCommand(a), "python3 tools/compile_step.py --module " + source_ +
                                       ":build --builder-kwargs '{\"num_classes\":10}' --shape 3,32,32 "
                                       "--torchscript " +
                                       a.path);
  EXPECT_EQ(a.facts["source_sha256"], Sha256OfFile(source_));
  // builder defaults to build; no kwargs, no --builder-kwargs.
  json t = Trial();
  t["model"].erase("builder");
  t["model"].erase("kwargs");
  EXPECT_EQ(PythonModelArtifact(t, "c", "2.11.0").args,
            (std::vector<std::string>{"--module", source_ + ":build", "--shape", "3,32,32"}));
  json with = Trial();
  SetArtifact(&with, a.path);
  EXPECT_EQ(with["model"]["artifact"], a.path);
}

TEST_F(PythonModel, TheKeyChangesWithTheSourceKwargsAndShapeAndNotWithTraining) {
  const std::string key = PythonModelArtifact(Trial(), "c", "2.11.0").key;
  json same = Trial();
  same["seed"] = 3, same["train"]["steps"] = 400, same["train"]["optimizer"] = {{"name", "adamw"}, {"lr", 0.001}};
  same["precision"] = "fp32", same["data"]["batch_size"] = 8, same["results"] = "elsewhere/runx.db";
  same["optimizations"] = json::object();
  EXPECT_EQ(PythonModelArtifact(same, "c", "2.11.0").key, key);
  const auto differs = [&](const char* what, const json& t, const std::string& release = "2.11.0") {
    const auto a = PythonModelArtifact(t, "c", release);
    ASSERT_EQ(a.reason, "") << what;
    EXPECT_NE(a.key, key) << what;
  };
  json t = Trial();
  t["model"]["kwargs"]["num_classes"] = 20;
  differs("kwargs", t);
  t = Trial();
  t["model"]["builder"] = "build_wide";
  differs("builder", t);
  t = Trial();
  t["data"]["shape"] = {3, 64, 64};
  differs("shape", t);
  t = Trial();
  t["model"]["num_classes"] = 5;
  differs("classes", t);
  differs("LibTorch release", Trial(), "2.12.0");
  Write("def build(num_classes=10):\n    return None  # edited\n");
  differs("source", Trial());
}

TEST_F(PythonModel, WhatTheArtifactCannotBeMadeForIsRefusedWithTheReason) {
  json t = Trial();
  t["model"]["path"] = (dir_ / "missing.py").string();
  const auto missing = PythonModelArtifact(t, "c", "2.11.0");
  EXPECT_EQ(missing.path, "");
  EXPECT_EQ(
      missing.reason.rfind("model 'python' needs its source " + (dir_ / "missing.py").string() + ": cannot read", 0),
      0u)
      << missing.reason;
  t = Trial();
  t["data"] = {{"source", "memmap"}, {"path", "x.npy"}, {"labels", "y.npy"}, {"batch_size", 8}};
  EXPECT_NE(PythonModelArtifact(t, "c", "2.11.0").reason.find("state it in data.shape"), std::string::npos);
  t["data"]["source"] = "fashion-mnist";
  EXPECT_EQ(PythonModelArtifact(t, "c", "2.11.0").args.back(), "1,28,28");
}

TEST_F(PythonModel, TheSourcesContentIsInTheTrialsIdentityAndTheArtifactIsNot) {
  json c = Trial();
  const ConfigIdentity before = IdentifyConfig(c);
  EXPECT_EQ(before.inputs["model.path"]["sha256"], Sha256OfFile(source_));
  EXPECT_EQ(before.used["model"]["kwargs"]["num_classes"], 10);
  // Where the artifact lies, and which bytes torch.jit.save wrote, is not what the trial is.
  SetArtifact(&c, (dir_ / "a.ts.pt").string());
  std::ofstream(dir_ / "a.ts.pt") << "one save";
  const ConfigIdentity with = IdentifyConfig(c);
  EXPECT_EQ(with.hash, before.hash);
  EXPECT_EQ(with.used["model"]["artifact"], (dir_ / "a.ts.pt").string());  // kept for people
  SetArtifact(&c, (dir_ / "b.ts.pt").string());
  EXPECT_EQ(IdentifyConfig(c).hash, before.hash);
  // The source's content is.
  Write("def build(num_classes=10, hidden=64):\n    ...\n");
  EXPECT_NE(IdentifyConfig(c).hash, before.hash);
  Write("def build(num_classes=10):\n    ...\n");
  EXPECT_EQ(IdentifyConfig(c).hash, before.hash);
  json k = Trial();
  k["model"]["kwargs"]["num_classes"] = 11;
  EXPECT_NE(IdentifyConfig(k).hash, before.hash);
  // Another model keeps none of python's keys.
  json mlp = Trial();
  mlp["model"]["name"] = "mlp";
  mlp["model"]["artifact"] = "x";
  EXPECT_FALSE(UsedConfig(mlp)["model"].contains("builder"));
  EXPECT_FALSE(UsedConfig(mlp)["model"].contains("kwargs"));
  EXPECT_FALSE(UsedConfig(mlp)["model"].contains("artifact"));
}

TEST_F(PythonModel, PackageAutoNamesTheCompiledStepOfTheSameBuilder) {
  const auto p = AutoPackage(Trial(), "c", "2.11.0");
  ASSERT_EQ(p.reason, "");
  EXPECT_EQ(p.path, "c/small_cnn-build-b64-bf16-cl-" + p.key + ".pt2");
  EXPECT_EQ(CompileCommand(p), "python3 tools/compile_step.py --module " + source_ +
                                   ":build --builder-kwargs '{\"num_classes\":10}' --shape 3,32,32 --num-classes 10 "
                                   "--batch 64 --dtype bf16 --channels-last --measure 0 -o " +
                                   p.path);
  EXPECT_EQ(p.facts["model"]["source_sha256"], Sha256OfFile(source_));
  EXPECT_FALSE(p.facts["model"].contains("path"));
  json moved = Trial();
  fs::copy_file(source_, dir_ / "other.py");
  moved["model"]["path"] = (dir_ / "other.py").string();
  EXPECT_EQ(AutoPackage(moved, "c", "2.11.0").key, p.key);  // the source counts by its content
  json same = Trial();
  same["seed"] = 9, same["train"]["optimizer"]["lr"] = 0.5;
  EXPECT_EQ(AutoPackage(same, "c", "2.11.0").key, p.key);
  Write("def build(num_classes=10):\n    return None  # edited\n");
  EXPECT_NE(AutoPackage(Trial(), "c", "2.11.0").key, p.key);  // an edited model.py: another package
  json t = Trial();
  t["model"]["kwargs"]["num_classes"] = 12;
  EXPECT_NE(AutoPackage(t, "c", "2.11.0").key, p.key);
  t = Trial();
  t["model"]["path"] = (dir_ / "missing.py").string();
  EXPECT_NE(AutoPackage(t, "c", "2.11.0").reason.find("model 'python' needs its source"), std::string::npos);
}

}  // namespace
}  // namespace runx::spec
