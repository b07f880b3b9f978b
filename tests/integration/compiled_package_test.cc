// compiled_step's `package: auto` through the real runx binary: the trial's package is named beside
// the results store and the trial refused, with the command, until it exists; `runx compile` lists
// and makes what is missing, refuses a Python whose torch release is not LibTorch's, keeps nothing of
// a failed compile, and once a package is there the trial finds it by itself.
//
// Making a real package needs PyTorch 2.x with CUDA (bench/gpu-checks.sh compiled does it on the
// GPU machine). Here a stand-in interpreter plays tools/compile_step.py's part of the contract: it
// answers the torch version probe and writes FILE.pt2 and its sidecar FILE.pt2.json where -o says.
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <runx/compat.h>
#include <nlohmann/json.hpp>

#include "store_fixture.h"

namespace {

namespace fs = std::filesystem;

class CompiledPackage : public runx::testing::StoreFixture {
 protected:
  CompiledPackage() : StoreFixture("runx_compiled_package") {}

  std::string Yaml() const {
    return "name: cs\ndevice: cpu\nmodel: {name: resnet18, num_classes: 10}\n"
           "data: {source: synthetic, shape: [3, 16, 16], num_classes: 10, batch_size: 4}\n"
           "train: {warmup_steps: 1, steps: 2, eval: false}\noptimizations: {compiled_step: {}}\n";
  }
  std::string File() {
    const auto p = dir_ / "cs.yaml";
    std::ofstream(p) << Yaml();
    return p.string();
  }
  /// An interpreter that says it has torch `version` and, run as compile_step.py, ends with `status`
  /// after writing the package and a sidecar for the trial above (or writes nothing if status != 0).
  std::string Python(const std::string& version, int status = 0) {
    const auto p = dir_ / "python";
    std::ofstream(p) << "#!/bin/sh\n"
                        "if [ \"$1\" = -c ]; then echo '"
                     << version
                     << "'; exit 0; fi\n"
                        "echo \"compile_step.py $*\" >>'"
                     << (dir_ / "calls").string()
                     << "'\n"
                        "[ "
                     << status << " -eq 0 ] || exit " << status
                     << "\n"
                        "while [ \"$1\" != -o ]; do shift; done\n"
                        "echo 'stands for a package' >\"$2\"\n"
                        "cat >\"$2.json\" <<'EOF'\n"
                        R"({"format": "runx-compiled-step/1", "torch": ")"
                     << version
                     << R"(", "device": "NVIDIA H200",
 "model": "resnet18", "dtype": "fp32", "channels_last": false, "batch": 4, "shape": [3, 16, 16], "inputs": [],
 "outputs": [{"kind": "loss", "name": "loss", "shape": [], "stride": [], "dtype": "float32"}]})"
                        "\nEOF\n";
    chmod(p.c_str(), 0755);
    return p.string();
  }
  std::string Calls() {
    std::ifstream in(dir_ / "calls");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

TEST_F(CompiledPackage, AutoNamesThePackageBesideTheStoreAndRefusesTheTrialUntilItIsMade) {
  const auto id = Run(Yaml(), "cs");
  ASSERT_EQ(Status(id), "incompatible") << last_output_;
  const std::string prefix = (dir_ / "compiled" / "resnet18-b4-fp32-").string();
  const std::string error = Error(id);
  EXPECT_NE(error.find("compiled_step: no package for this trial at " + prefix), std::string::npos) << error;
  EXPECT_NE(error.find("with `runx compile "), std::string::npos) << error;
  // The command names the compile_step.py runx ships (here the source tree's), not one relative to
  // wherever the user stands.
  EXPECT_NE(error.find("python3 " + std::string(RUNX_SOURCE_DIR) +
                       "/tools/compile_step.py --model resnet18 --batch 4 --image-size 16 --num-classes 10 "
                       "--dtype fp32 --measure 0 -o " +
                       prefix),
            std::string::npos)
      << error;
  // What else stands in the way on this machine is said with it: no package made here could run.
  if (!runx::compat::kHasAotInductor) {
    EXPECT_NE(error.find("(PyTorch 2.6 or later, the release of the runx that runs it, with CUDA)"), std::string::npos)
        << error;
    EXPECT_NE(error.find("; this runx could not run it either: compiled_step needs LibTorch 2.6 or later "
                         "(AOTInductor's package loader), and this runx is built against LibTorch " +
                         runx::compat::TorchVersionString()),
              std::string::npos)
        << error;
  } else {
    EXPECT_NE(error.find("; and a package runs on CUDA only: this trial runs on cpu"), std::string::npos) << error;
  }
  // The trial ran (and is identified) with the file its key names.
  const auto config = nlohmann::json::parse(Get("SELECT config_json FROM trials WHERE id = ?", id));
  const std::string package = config["optimizations"]["compiled_step"]["package"];
  EXPECT_EQ(package.rfind(prefix, 0), 0u) << package;
  EXPECT_EQ(fs::path(package).extension(), ".pt2");

  // runx compile --dry-run: the same package, missing, with the same command; nothing made.
  const auto dry = runx::testing::Runx("compile " + File() + " --db " + db_ + " --dry-run");
  EXPECT_EQ(dry.status, 0) << dry.out;
  EXPECT_NE(dry.out.find("1 package for 1 trial of"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("missing  " + package), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("-o " + package), std::string::npos) << dry.out;
  EXPECT_FALSE(fs::exists(package));
}

TEST_F(CompiledPackage, CompileMakesTheMissingPackageAndTheTrialFindsIt) {
  const std::string release = runx::compat::TorchVersionString();
  // A Python of another torch release is refused before anything compiles, both releases named.
  auto r = runx::testing::Runx("compile " + File() + " --db " + db_ + " --python " + Python("2.99.1+cu130"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("has torch 2.99.1+cu130, runx's LibTorch is " + release), std::string::npos) << r.out;
  EXPECT_EQ(Calls(), "");
  // A compile that fails keeps nothing, and says so.
  r = runx::testing::Runx("compile " + File() + " --db " + db_ + " --python " + Python(release + "+cu130", 3));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("compile_step.py ended with status 3"), std::string::npos) << r.out;
  for (const auto& e : fs::directory_iterator(dir_ / "compiled"))
    EXPECT_EQ(e.path().extension(), ".lock") << e.path();  // no package, sidecar or partial file
  // The compile that works: tools/compile_step.py of this source tree, with the trial's arguments
  // and --measure 0, into a partial file that is then moved into place.
  r = runx::testing::Runx("compile " + File() + " --db " + db_ + " --python " + Python(release + "+cu130"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("compile: made " + (dir_ / "compiled" / "resnet18-b4-fp32-").string()), std::string::npos)
      << r.out;
  // A runx that cannot load what it compiles says so first (Debian's LibTorch 1.13).
  EXPECT_EQ(r.out.find("runx: warning: this runx (LibTorch " + release +
                       ") cannot load AOTInductor packages: "
                       "compiled_step needs LibTorch 2.6 or later"),
            runx::compat::kHasAotInductor ? std::string::npos : r.out.find("runx: warning:"))
      << r.out;
  const std::string calls = Calls();
  EXPECT_NE(calls.find(std::string(RUNX_SOURCE_DIR) +
                       "/tools/compile_step.py --model resnet18 --batch 4 "
                       "--image-size 16 --num-classes 10 --dtype fp32 --measure 0 -o " +
                       (dir_ / "compiled").string() + "/.partial-"),
            std::string::npos)
      << calls;
  size_t packages = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "compiled")) {
    EXPECT_EQ(e.path().filename().string().rfind(".partial-", 0), std::string::npos) << e.path();
    packages += e.path().extension() == ".pt2";
  }
  EXPECT_EQ(packages, 1u);
  // Present now: a second compile makes nothing.
  const auto before = Calls();
  r = runx::testing::Runx("compile " + File() + " --db " + db_ + " --python " + Python(release + "+cu130"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("present  "), std::string::npos) << r.out;
  EXPECT_EQ(Calls(), before);

  // The trial finds the package by itself: past the missing-package refusal, its sidecar is read
  // and checked against the plan, and the package is part of the trial's identity.
  const auto id = Run(Yaml(), "cs");
  EXPECT_EQ(Status(id), "incompatible") << last_output_;
  EXPECT_EQ(Error(id).find("no package for this trial"), std::string::npos) << Error(id);
  if (!runx::compat::kHasAotInductor)
    EXPECT_NE(Error(id).find("compiled_step needs LibTorch 2.6 or later"), std::string::npos) << Error(id);
  else
    EXPECT_NE(Error(id).find("this trial runs on cpu"), std::string::npos) << Error(id);
  const auto inputs = nlohmann::json::parse(Get("SELECT inputs FROM trials WHERE id = ?", id));
  EXPECT_EQ(inputs["optimizations.compiled_step.package"]["sha256"].get<std::string>().size(), 64u) << inputs.dump();
}

TEST_F(CompiledPackage, WhatCompileStepCannotMakeByNameIsRefusedWithTheReason) {
  const auto p = dir_ / "gray.yaml";
  std::ofstream(p) << "name: gray\ndevice: cpu\nmodel: {name: resnet18, num_classes: 10}\n"
                      "data: {source: synthetic, shape: [1, 16, 16], num_classes: 10, batch_size: 4}\n"
                      "train: {warmup_steps: 1, steps: 2, eval: false}\noptimizations: {compiled_step: {}}\n";
  const auto r = runx::testing::Runx("compile " + p.string() + " --db " + db_ + " --dry-run");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("cannot name this trial's package: compile_step.py compiles resnet18 for images [3, H, H]; "
                       "data.shape is [1, 16, 16]"),
            std::string::npos)
      << r.out;
  const auto id =
      Run("name: gray\ndevice: cpu\nmodel: {name: resnet18, num_classes: 10}\n"
          "data: {source: synthetic, shape: [1, 16, 16], num_classes: 10, batch_size: 4}\n"
          "train: {warmup_steps: 1, steps: 2, eval: false}\noptimizations: {compiled_step: {}}\n",
          "gray2");
  EXPECT_EQ(Status(id), "incompatible") << last_output_;
  EXPECT_NE(Error(id).find("[1, 16, 16]"), std::string::npos) << Error(id);
  // and, as for a missing package, what else keeps the trial from running here
  if (!runx::compat::kHasAotInductor)
    EXPECT_NE(Error(id).find("; this runx could not run it either: compiled_step needs LibTorch 2.6 or later"),
              std::string::npos)
        << Error(id);
  else
    EXPECT_NE(Error(id).find("; and a package runs on CUDA only: this trial runs on cpu"), std::string::npos)
        << Error(id);
}

}  // namespace
