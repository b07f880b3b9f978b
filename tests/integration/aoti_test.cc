// model: {name: aoti} through the real runx binary. Everywhere: training is refused at the model
// line, a LibTorch without AOTInductor records the trial as incompatible naming its version, and
// amp/channels_last/export are refused for a package. Where LibTorch has AOTInductor and
// RUNX_TEST_AOTI_PACKAGE names a CUDA package (tools/aoti_package.py --model resnet18 --shape 3,32,32
// --num-classes 10 --batch 4; bench/gpu-checks.sh aoti-tests makes it): the package runs, cuda_graphs
// captures and replays it, and a batch size other than the compiled one fails with AOTI's message.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>
#include <runx/compat.h>

#include "store_fixture.h"

namespace {

class Aoti : public runx::testing::StoreFixture {
 protected:
  Aoti() : StoreFixture("runx_aoti") {}
  std::string Yaml(const std::string& device, const std::string& path, int batch, const std::string& extra = "") {
    return "name: aoti\ntask: infer\ndevice: " + device + "\nmodel: {name: aoti, path: " + path +
           "}\ndata: {source: synthetic, shape: [3, 32, 32], num_classes: 10, batch_size: " + std::to_string(batch) +
           "}\ninfer: {warmup_steps: 3, steps: 20, eval: false}\n" + extra;
  }
};

TEST_F(Aoti, TrainingAPackageIsRefusedAtTheModelLine) {
  const auto p = dir_ / "train.yaml";
  std::ofstream(p) << "name: t\nmodel: {name: aoti, path: m.pt2}\n"
                      "data: {source: synthetic, shape: [8], num_classes: 2, batch_size: 4}\n";
  const auto r = runx::testing::Runx(p.string() + " --db " + db_);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("train.yaml:2:15: error: model 'aoti' runs an AOTInductor package, which is inference-only"),
            std::string::npos)
      << r.out;
}

TEST_F(Aoti, WithoutAotInductorTheTrialIsIncompatibleAndSaysWhichVersionRuns) {
  if (runx::compat::kHasAotInductor) GTEST_SKIP() << "this LibTorch has AOTInductor";
  const auto pkg = dir_ / "model.pt2";
  std::ofstream(pkg) << "not a package";
  const auto id = Run(Yaml("cpu", pkg.string(), 4));
  EXPECT_EQ(Status(id), "incompatible") << last_output_;
  EXPECT_NE(Error(id).find("model 'aoti' needs LibTorch 2.6 or later"), std::string::npos) << Error(id);
  EXPECT_NE(Error(id).find("built against LibTorch " + runx::compat::TorchVersionString()), std::string::npos)
      << Error(id);
}

TEST_F(Aoti, PrecisionLayoutAndExportTechniquesAreRefusedForAPackage) {
  const auto pkg = dir_ / "model.pt2";
  std::ofstream(pkg) << "not a package";
  const auto amp = Run(Yaml("cpu", pkg.string(), 4, "optimizations: {amp: {dtype: bf16}}\n"), "amp");
  EXPECT_EQ(Status(amp), "incompatible");
  EXPECT_NE(Error(amp).find("precision compiled in"), std::string::npos) << Error(amp);
  const auto cl = Run(Yaml("cpu", pkg.string(), 4, "optimizations: [channels_last]\n"), "cl");
  EXPECT_EQ(Status(cl), "incompatible");
  EXPECT_NE(Error(cl).find("memory format compiled in"), std::string::npos) << Error(cl);
  const auto exp = Run(Yaml("cpu", pkg.string(), 4, "optimizations: [export]\n"), "exp");
  EXPECT_EQ(Status(exp), "incompatible");
  EXPECT_NE(Error(exp).find("exported model already"), std::string::npos) << Error(exp);
}

TEST_F(Aoti, APackageRunsAndCudaGraphsReplayIt) {
  const char* pkg = std::getenv("RUNX_TEST_AOTI_PACKAGE");
  if (!runx::compat::kHasAotInductor || pkg == nullptr || *pkg == '\0')
    GTEST_SKIP() << "needs LibTorch >= 2.6 and RUNX_TEST_AOTI_PACKAGE (a CUDA package, see the file's comment)";
  const auto plain = Run(Yaml("cuda", pkg, 4), "plain");
  ASSERT_EQ(Status(plain), "ok") << last_output_ << Error(plain);
  EXPECT_EQ(Get("SELECT count(*) FROM steps WHERE trial_id = ? AND phase = 'measure'", plain), "20");
  EXPECT_EQ(Metric(plain, "param_count"), 0);  // the weights are compiled into the package
  const auto graphs = Run(Yaml("cuda", pkg, 4, "optimizations: [cuda_graphs]\n"), "graphs");
  ASSERT_EQ(Status(graphs), "ok") << last_output_ << Error(graphs);
  EXPECT_GE(Metric(graphs, "cuda_graphs.replays"), 20);
  // The batch size is compiled in: another one fails with AOTInductor's own message.
  const auto wrong = Run(Yaml("cuda", pkg, 8), "wrong");
  EXPECT_EQ(Status(wrong), "failed");
  EXPECT_NE(Error(wrong).find("aoti model"), std::string::npos) << Error(wrong);
  // A CUDA package on the CPU: incompatible, both device types named.
  const auto cpu = Run(Yaml("cpu", pkg, 4), "cpu");
  EXPECT_EQ(Status(cpu), "incompatible");
  EXPECT_NE(Error(cpu).find("compiled for cuda, the trial runs on cpu"), std::string::npos) << Error(cpu);
}

// compiled_step (a training step compiled by AOTInductor) through the real binary: a trial this
// build or device cannot run is recorded as incompatible with the reason, and nothing else runs.
TEST_F(Aoti, ACompiledStepTrialThisBuildCannotRunIsRecordedIncompatibleWithTheReason) {
  const auto pkg = dir_ / "step.pt2";
  std::ofstream(pkg) << "stands for a package";
  std::ofstream(pkg.string() + ".json")
      << R"({"format": "runx-compiled-step/1", "torch": "2.11.0+cu130", "device": "NVIDIA H200", "model": "resnet18",
             "dtype": "fp32", "channels_last": false, "batch": 4, "shape": [3, 16, 16], "inputs": [],
             "outputs": [{"kind": "loss", "name": "loss", "shape": [], "stride": [], "dtype": "float32"}]})";
  const auto yaml =
      "name: cs\ndevice: cpu\nmodel: {name: resnet18}\n"
      "data: {source: synthetic, shape: [3, 16, 16], num_classes: 10, batch_size: 4}\n"
      "train: {warmup_steps: 1, steps: 2, eval: false}\noptimizations: {compiled_step: {package: " +
      pkg.string() + "}}\n";
  const auto id = Run(yaml, "cs");
  EXPECT_EQ(Status(id), "incompatible") << last_output_;
  if (!runx::compat::kHasAotInductor)
    EXPECT_NE(Error(id).find("compiled_step needs LibTorch 2.6 or later"), std::string::npos) << Error(id);
  else
    EXPECT_NE(Error(id).find("the package was compiled for CUDA (NVIDIA H200); this trial runs on cpu"),
              std::string::npos)
        << Error(id);
  std::ofstream(pkg.string() + ".json") << "{}";  // not a sidecar: refused before anything loads, with how to make one
  const auto again = Run(yaml, "cs2");
  EXPECT_NE(Error(again).find("is not a compiled-step sidecar"), std::string::npos) << Error(again);
}

}  // namespace
