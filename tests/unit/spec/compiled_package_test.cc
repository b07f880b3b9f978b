// compiled_step's `package: auto`: which package a trial needs, by a key over what the package is
// compiled for, and the compile_step.py arguments that make it.
#include "spec/compiled_package.h"

#include <gtest/gtest.h>

namespace runx::spec {
namespace {

using json = nlohmann::json;

json Trial() {
  return json::parse(R"({
    "name": "e", "results": "results/runx.db", "device": "cuda", "seed": 0, "precision": "bf16",
    "model": {"name": "resnet50", "num_classes": 1000},
    "data": {"source": "synthetic", "shape": [3, 224, 224], "num_classes": 1000, "batch_size": 256},
    "train": {"optimizer": {"name": "sgd", "lr": 0.1, "momentum": 0.9}, "warmup_steps": 12, "steps": 40},
    "optimizations": {"channels_last": {}, "compiled_step": {"package": "auto"}, "fused_optimizer": {}}
  })");
}

json Gpt() {
  return json::parse(R"({
    "name": "g", "device": "cuda", "precision": "bf16",
    "model": {"name": "gpt", "n_layer": 8, "n_head": 8, "d_model": 512, "dropout": 0},
    "data": {"source": "text", "path": "/usr/share/games/fortunes", "seq_len": 256, "batch_size": 64},
    "train": {"optimizer": {"name": "adamw", "lr": 0.0006}, "steps": 40},
    "optimizations": {"compiled_step": {}}
  })");
}

TEST(CompiledPackage, AGptStepIsNamedWithPeerGptsArguments) {
  const auto p = AutoPackage(Gpt(), "c", "2.11.0");
  ASSERT_EQ(p.reason, "");
  EXPECT_EQ(p.path, "c/gpt-b64-bf16-" + p.key + ".pt2");
  EXPECT_EQ(CompileCommand(p),
            "python3 tools/compile_step.py --model gpt --n-layer 8 --n-head 8 --d-model 512 "
            "--seq-len 256 --vocab 256 --batch 64 --dtype bf16 --measure 0 -o " +
                p.path);
  json t = Gpt();
  t["model"]["block_size"] = 512;
  const auto wider = AutoPackage(t, "c", "2.11.0");
  EXPECT_NE(wider.key, p.key);
  EXPECT_NE(CompileCommand(wider).find("--seq-len 256 --block-size 512 --vocab 256"), std::string::npos);
  t = Gpt();
  t["data"]["path"] = "/elsewhere/text.txt";  // the text is data, not the step
  EXPECT_EQ(AutoPackage(t, "c", "2.11.0").key, p.key);
  t = Gpt();
  t["data"]["seq_len"] = 128;
  EXPECT_NE(AutoPackage(t, "c", "2.11.0").key, p.key);
}

TEST(CompiledPackage, AutoNamesTheTrialsPackageBesideTheStoreWithTheCommandThatMakesIt) {
  EXPECT_TRUE(WantsAutoPackage(Trial()));
  json absent = Trial();
  absent["optimizations"]["compiled_step"] = json::object();  // auto is the default
  EXPECT_TRUE(WantsAutoPackage(absent));
  json named = Trial();
  named["optimizations"]["compiled_step"]["package"] = "mine.pt2";
  EXPECT_FALSE(WantsAutoPackage(named));
  json none = Trial();
  none["optimizations"].erase("compiled_step");
  EXPECT_FALSE(WantsAutoPackage(none));

  EXPECT_EQ(CompiledDirFor("results/runx.db"), "results/compiled");
  EXPECT_EQ(CompiledDirFor("runx.db"), "compiled");
  const auto p = AutoPackage(Trial(), CompiledDirFor("results/runx.db"), "2.11.0");
  ASSERT_EQ(p.reason, "");
  ASSERT_EQ(p.key.size(), 16u);
  EXPECT_EQ(p.path, "results/compiled/resnet50-b256-bf16-cl-" + p.key + ".pt2");
  EXPECT_EQ(
      CompileCommand(p),
      "python3 tools/compile_step.py --model resnet50 --batch 256 --image-size 224 --num-classes 1000 --dtype bf16 "
      "--channels-last --measure 0 -o " +
          p.path);
  EXPECT_EQ(p.facts["libtorch"], "2.11.0");
  EXPECT_EQ(p.facts["dtype"], "bf16");

  json with_path = Trial();
  SetPackage(&with_path, p.path);
  EXPECT_EQ(with_path["optimizations"]["compiled_step"]["package"], p.path);
  EXPECT_FALSE(WantsAutoPackage(with_path));
}

TEST(CompiledPackage, TheKeyChangesWithWhatThePackageIsCompiledForAndNothingElse) {
  const std::string key = AutoPackage(Trial(), "c", "2.11.0").key;
  // The same step: other training settings, steps, seed, optimizer, other techniques, the store.
  json same = Trial();
  same["seed"] = 3, same["train"]["steps"] = 400, same["train"]["optimizer"]["lr"] = 0.2;
  same["optimizations"].erase("fused_optimizer");
  same["results"] = "elsewhere/runx.db";
  EXPECT_EQ(AutoPackage(same, "c", "2.11.0").key, key);
  // Another step: each of these compiles differently.
  const auto differs = [&](const char* what, json t, const std::string& release = "2.11.0") {
    const auto p = AutoPackage(t, "c", release);
    ASSERT_EQ(p.reason, "") << what;
    EXPECT_NE(p.key, key) << what;
  };
  json t = Trial();
  t["data"]["batch_size"] = 128;
  differs("batch", t);
  t = Trial();
  t["data"]["shape"] = {3, 160, 160};
  differs("image size", t);
  t = Trial();
  t["model"]["num_classes"] = 10;
  differs("classes", t);
  t = Trial();
  t.erase("precision");
  differs("fp32", t);
  t = Trial();
  t["optimizations"].erase("channels_last");
  differs("contiguous", t);
  t = Trial();
  t["model"]["name"] = "resnet18";
  differs("model", t);
  differs("LibTorch release", Trial(), "2.12.0");
  // amp's own dtype counts like the precision that implies it.
  t = Trial();
  t.erase("precision");
  t["optimizations"]["amp"] = {{"dtype", "bf16"}};
  EXPECT_EQ(AutoPackage(t, "c", "2.11.0").key, key);
  t = Trial();
  t.erase("precision");
  t["optimizations"]["amp"] = json::object();  // amp alone: bf16
  EXPECT_EQ(AutoPackage(t, "c", "2.11.0").key, key);
}

TEST(CompiledPackage, WhatCompileStepCannotMakeByNameIsRefusedWithTheReason) {
  const auto reason = [](json t) {
    const auto p = AutoPackage(t, "c", "2.11.0");
    EXPECT_EQ(p.path, "");
    return p.reason;
  };
  json t = Trial();
  t["model"] = {{"name", "mlp"}};
  EXPECT_NE(reason(t).find("not model 'mlp'; make the package with `python3 tools/compile_step.py --module"),
            std::string::npos)
      << reason(t);
  t = Gpt();
  t["data"]["tokenizer"] = "chars";
  EXPECT_NE(reason(t).find("over byte tokens"), std::string::npos) << reason(t);
  t = Gpt();
  t["model"]["dropout"] = 0.1;
  EXPECT_NE(reason(t).find("(dropout: 0)"), std::string::npos) << reason(t);
  t = Trial();
  t["data"]["shape"] = {1, 28, 28};
  EXPECT_NE(reason(t).find("images [3, H, H]; data.shape is [1, 28, 28]"), std::string::npos) << reason(t);
  t = Trial();
  t["data"].erase("shape");
  EXPECT_NE(reason(t).find("data.shape: [3, H, H]"), std::string::npos) << reason(t);
  t = Trial();
  t["data"]["batch_size"] = "auto";
  EXPECT_NE(reason(t).find("one batch size; data.batch_size must be a number, not \"auto\""), std::string::npos)
      << reason(t);
  t = Trial();
  t["precision"] = "fp16";
  EXPECT_NE(reason(t).find("fp32 or bf16 steps; this trial's amp dtype is fp16"), std::string::npos) << reason(t);
  t = Trial();
  t["model"].erase("num_classes");
  t["data"].erase("num_classes");
  EXPECT_NE(reason(t).find("model.num_classes"), std::string::npos) << reason(t);
  for (const auto& r : {reason(t)}) EXPECT_EQ(r.rfind("compiled_step: package: auto cannot name", 0), 0u) << r;
}

}  // namespace
}  // namespace runx::spec
