// The config identity: the keys a trial uses, the techniques it runs, its input files by content.
#include "spec/identity.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace runx::spec {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

json Resolved() {
  return json::parse(R"({
    "name": "e", "description": "d", "results": "r.db", "repeats": 3, "order": "interleaved",
    "order_seed": 1, "trial_timeout_s": 60, "sweep": {"mode": "grid"},
    "device": "cpu", "seed": 7, "task": "train", "precision": "bf16",
    "model": {"name": "cnn", "channels": [4, 8], "hidden": [256], "dropout": 0, "num_classes": 5},
    "data": {"source": "synthetic", "shape": [3, 8, 8], "num_classes": 5, "batch_size": 8,
             "path": "/usr/share/datasets/fashion-mnist", "shuffle": true},
    "train": {"steps": 3, "warmup_steps": 1},
    "infer": {"steps": 100},
    "optimizations": {"channels_last": {"inputs": true}}
  })");
}

// Only a regular file is hashed: a device never ends and a FIFO waits for a writer (issue 30, 2).
TEST(Identity, HashesOnlyRegularFilesAndNeverWaits) {
  const fs::path dir = fs::temp_directory_path() / ("runx_sha_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string fifo = (dir / "f").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_THROW(
      try { Sha256OfFile(fifo); } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("is a FIFO, not a regular file"), std::string::npos) << e.what();
        throw;
      },
      std::runtime_error);
  EXPECT_THROW(Sha256OfFile("/dev/zero"), std::runtime_error);
  std::ofstream(dir / "abc") << "abc";
  EXPECT_EQ(Sha256OfFile((dir / "abc").string()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  json config = Resolved();
  config["model"] = {{"name", "torchscript"}, {"path", fifo}};
  EXPECT_NE(InputFiles(config)["model.path"]["sha256"].get<std::string>().find("unreadable: "), std::string::npos);
  fs::remove(fifo);
  fs::remove(dir / "abc");
  fs::remove(dir);
}

TEST(Identity, UsedConfigKeepsOnlyWhatTheTrialUses) {
  EXPECT_EQ(UsedConfig(Resolved()), json::parse(R"({
    "device": "cpu", "seed": 7, "task": "train", "precision": "bf16",
    "model": {"name": "cnn", "channels": [4, 8], "dropout": 0, "num_classes": 5},
    "data": {"source": "synthetic", "shape": [3, 8, 8], "num_classes": 5, "batch_size": 8, "shuffle": true},
    "train": {"steps": 3, "warmup_steps": 1},
    "optimizations": {"channels_last": {"inputs": true}, "amp": {}}
  })"));
  json infer = Resolved();
  infer["task"] = "infer";
  EXPECT_FALSE(UsedConfig(infer).contains("train"));
  EXPECT_TRUE(UsedConfig(infer).contains("infer"));
}

TEST(Identity, ResolvedTechniquesMakeTheImplicitOnesExplicit) {
  json c = Resolved();
  c["data"]["batch_size"] = "auto";
  EXPECT_EQ(ResolvedTechniques(c), json::parse(R"({"channels_last": {"inputs": true}, "amp": {}, "auto_batch": {}})"));
  c["precision"] = "fp32";
  c["optimizations"] = {{"amp", {{"dtype", "fp16"}}}};
  c["data"]["batch_size"] = 8;
  EXPECT_EQ(ResolvedTechniques(c), json::parse(R"({"amp": {"dtype": "fp16"}})"));  // listed: kept as written
}

TEST(Identity, WhatDoesNotChangeATrialDoesNotChangeItsHash) {
  const json base = Resolved();
  json renamed = base;
  renamed["name"] = "other";
  renamed["repeats"] = 9;
  renamed["model"]["hidden"] = {16};  // a cnn has no hidden widths
  EXPECT_EQ(IdentifyConfig(base).hash, IdentifyConfig(renamed).hash);
  json changed = base;
  changed["train"]["steps"] = 4;
  EXPECT_NE(IdentifyConfig(base).hash, IdentifyConfig(changed).hash);
}

TEST(Identity, InputFilesCountByContentNotByPath) {
  const fs::path dir = fs::temp_directory_path() / ("runx_identity_" + std::to_string(getpid()));
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  std::ofstream(dir / "a" / "model.pt") << "weights-1";
  std::ofstream(dir / "b" / "model.pt") << "weights-1";
  json c = Resolved();
  c["model"] = {{"name", "torchscript"}, {"path", (dir / "a" / "model.pt").string()}};
  const ConfigIdentity a = IdentifyConfig(c);
  EXPECT_EQ(a.inputs["model.path"]["sha256"], Sha256OfFile((dir / "a" / "model.pt").string()));
  EXPECT_EQ(a.used["model"]["path"], (dir / "a" / "model.pt").string());  // kept for people
  c["model"]["path"] = (dir / "b" / "model.pt").string();
  EXPECT_EQ(IdentifyConfig(c).hash, a.hash);  // moved: the same trial
  std::ofstream(dir / "b" / "model.pt") << "weights-2";
  EXPECT_NE(IdentifyConfig(c).hash, a.hash);  // new content: a new trial
  c["model"]["path"] = (dir / "missing.pt").string();
  EXPECT_EQ(IdentifyConfig(c).inputs["model.path"]["sha256"].get<std::string>().rfind("unreadable: cannot read", 0),
            0u);
  fs::remove_all(dir);
}

TEST(Identity, AFolderOfFilesIsHashedFileByFile) {
  const fs::path dir = fs::temp_directory_path() / ("runx_identity_dir_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "train.gz") << "1";
  std::ofstream(dir / "test.gz") << "2";
  json c = Resolved();
  c["data"] = {{"source", "fashion-mnist"}, {"path", dir.string()}, {"batch_size", 8}};
  const ConfigIdentity a = IdentifyConfig(c);
  EXPECT_EQ(a.inputs["data.path"]["files"], 2);
  std::ofstream(dir / "test.gz") << "3";
  EXPECT_NE(IdentifyConfig(c).hash, a.hash);
  fs::remove_all(dir);
}

TEST(Identity, ACompiledStepPackageAndItsSidecarCountByContent) {
  const fs::path dir = fs::temp_directory_path() / ("runx_identity_pkg_" + std::to_string(getpid()));
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  for (const char* d : {"a", "b"}) {
    std::ofstream(dir / d / "step.pt2") << "package-1";
    std::ofstream(dir / d / "step.pt2.json") << "{}";
  }
  json c = Resolved();
  c["optimizations"]["compiled_step"] = {{"package", (dir / "a" / "step.pt2").string()}};
  const ConfigIdentity a = IdentifyConfig(c);
  EXPECT_EQ(a.inputs["optimizations.compiled_step.package"]["sha256"], Sha256OfFile((dir / "a" / "step.pt2").string()));
  EXPECT_EQ(a.inputs["optimizations.compiled_step.sidecar"]["sha256"],
            Sha256OfFile((dir / "a" / "step.pt2.json").string()));
  EXPECT_EQ(a.used["optimizations"]["compiled_step"]["package"], (dir / "a" / "step.pt2").string());
  c["optimizations"]["compiled_step"]["package"] = (dir / "b" / "step.pt2").string();
  EXPECT_EQ(IdentifyConfig(c).hash, a.hash);  // moved: the same trial
  std::ofstream(dir / "b" / "step.pt2.json") << "{\"batch\": 2}";
  const std::string sidecar_changed = IdentifyConfig(c).hash;
  EXPECT_NE(sidecar_changed, a.hash);
  std::ofstream(dir / "b" / "step.pt2") << "package-2";
  EXPECT_NE(IdentifyConfig(c).hash, sidecar_changed);  // a recompiled package: a new trial
  fs::remove_all(dir);
}

}  // namespace
}  // namespace runx::spec
