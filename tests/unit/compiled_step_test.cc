// compiled_step's contract with its package: the sidecar is checked against the trial's plan and
// model before anything is loaded, and every refusal names both sides. The sidecars here are
// written from real models the way tools/compile_step.py writes them; the plugin is the real .so.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <runx/compat.h>
#include <torch/torch.h>

#include "../../plugins/compiled_step/sidecar.h"
#include "../remove_tree.h"
#include "fake_trial.h"
#include "models/models.h"

namespace runx {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using compiled_step::DtypeName;

json Slot(const std::string& kind, const std::string& name, const torch::Tensor& t) {
  return {{"kind", kind},
          {"name", name},
          {"torch_name", name},
          {"shape", t.sizes().vec()},
          {"stride", t.strides().vec()},
          {"dtype", DtypeName(t)}};
}

/// The sidecar tools/compile_step.py would write for `model` at `batch` samples of `shape`.
json SidecarFor(torch::nn::Module& model, int64_t batch, std::vector<int64_t> shape, const std::string& dtype,
                bool channels_last) {
  json in = json::array(), out = json::array();
  for (const auto& p : model.named_parameters()) in.push_back(Slot("parameter", p.key(), p.value()));
  for (const auto& b : model.named_buffers()) in.push_back(Slot("buffer", b.key(), b.value()));
  std::vector<int64_t> x_shape{batch};
  x_shape.insert(x_shape.end(), shape.begin(), shape.end());
  auto x = torch::empty(x_shape);
  if (channels_last) x = x.contiguous(at::MemoryFormat::ChannelsLast);
  in.push_back(Slot("input", "input", x));
  in.push_back(Slot("target", "target", torch::zeros({batch}, torch::kLong)));
  for (const auto& b : model.named_buffers()) out.push_back(Slot("buffer_update", b.key(), b.value()));
  out.push_back(Slot("loss", "loss", torch::zeros({})));
  for (const auto& p : model.named_parameters()) out.push_back(Slot("gradient", p.key(), p.value()));
  return {{"format", "runx-compiled-step/1"},
          {"torch", "2.11.0+cu130"},
          {"triton", "3.6.0"},
          {"device", "NVIDIA H200"},
          {"model", "resnet18"},
          {"batch", batch},
          {"shape", shape},
          {"dtype", dtype},
          {"channels_last", channels_last},
          {"inputs", in},
          {"outputs", out}};
}

class CompiledStep : public ::testing::Test {
 protected:
  CompiledStep() : dir_(fs::temp_directory_path() / ("runx_compiled_step_" + std::to_string(getpid()))) {
    fs::create_directories(dir_);
  }
  ~CompiledStep() override { testing::RemoveTree(dir_.string()); }  // not fs::remove_all: ../remove_tree.h
  /// Writes `sidecar` beside a stand-in package; returns the package's path.
  std::string Write(const json& sidecar, const std::string& name = "step.pt2") {
    const auto pkg = dir_ / name;
    std::ofstream(pkg) << "stands for a package";
    std::ofstream(pkg.string() + ".json") << sidecar.dump();
    return pkg.string();
  }
  static json Config(int64_t batch, const std::string& precision = "bf16") {
    return {{"precision", precision},
            {"model", {{"name", "resnet18"}}},
            {"data", {{"source", "synthetic"}, {"shape", {3, 16, 16}}, {"num_classes", 10}, {"batch_size", batch}}},
            {"optimizations", {{"channels_last", json::object()}}}};
  }
  fs::path dir_;
};

TEST_F(CompiledStep, AModelMatchingItsSidecarPassesAndEachDifferenceIsNamedWithBothSides) {
  auto model = models::MakeResNet(18, 3, 10);
  for (auto& p : model->parameters())
    if (p.dim() == 4) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
  const json j = SidecarFor(*model, 8, {3, 16, 16}, "bf16", true);
  const auto s = compiled_step::LoadSidecar(Write(j));
  EXPECT_EQ(compiled_step::ModelMismatch(s, *model, 8, {3, 16, 16}), "");

  EXPECT_NE(compiled_step::ModelMismatch(s, *model, 16, {3, 16, 16}).find("batch: the package's is 8, the trial's 16"),
            std::string::npos);
  EXPECT_NE(compiled_step::ModelMismatch(s, *model, 8, {3, 32, 32})
                .find("sample shape: the package's is [3, 16, 16], the trial's data gives [3, 32, 32]"),
            std::string::npos);

  json renamed = j;  // torchvision's nesting where runx registers blocks flat
  for (auto& e : renamed["inputs"])
    if (e["name"] == "layer1_0.conv1.weight") e["name"] = "layer1.0.conv1.weight";
  const std::string r =
      compiled_step::ModelMismatch(compiled_step::LoadSidecar(Write(renamed, "r.pt2")), *model, 8, {3, 16, 16});
  EXPECT_NE(r.find("parameter 'layer1.0.conv1.weight' float32 [64, 64, 3, 3]: the model has no parameter of that name"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("parameter 'layer1_0.conv1.weight' float32 [64, 64, 3, 3]: the model has it, the package does not"),
            std::string::npos)
      << r;

  json reshaped = j;
  reshaped["inputs"][0]["shape"] = {32, 3, 7, 7};
  const std::string sh =
      compiled_step::ModelMismatch(compiled_step::LoadSidecar(Write(reshaped, "s.pt2")), *model, 8, {3, 16, 16});
  EXPECT_NE(
      sh.find("parameter 'conv1.weight': the package's is float32 [32, 3, 7, 7], the model's float32 [64, 3, 7, 7]"),
      std::string::npos)
      << sh;

  auto contiguous = models::MakeResNet(18, 3, 10);  // the same model without channels_last
  const std::string st = compiled_step::ModelMismatch(s, *contiguous, 8, {3, 16, 16});
  EXPECT_NE(st.find("parameter 'conv1.weight' [64, 3, 7, 7]: the package expects strides [147, 1, 21, 3], the "
                    "model's are [147, 49, 7, 1] (the package is channels-last)"),
            std::string::npos)
      << st;

  // PyTorch writes a channels-last 1x1 convolution's strides as [C, 1, C, C]; LibTorch keeps
  // [C, 1, 1, 1], which is channels-last too: a size-1 dimension's stride is never used.
  json pytorch_strides = j;
  int one_by_one = 0;
  for (auto& e : pytorch_strides["inputs"]) {
    const auto shape = e["shape"].get<std::vector<int64_t>>();
    if (shape.size() == 4 && shape[2] == 1 && shape[3] == 1) {
      e["stride"] = {shape[1], 1, shape[1], shape[1]};
      ++one_by_one;
    }
  }
  ASSERT_GT(one_by_one, 0);  // resnet18's downsample convolutions
  EXPECT_EQ(
      compiled_step::ModelMismatch(compiled_step::LoadSidecar(Write(pytorch_strides, "p.pt2")), *model, 8, {3, 16, 16}),
      "");

  json half = j;
  half["inputs"][0]["dtype"] = "bfloat16";
  const std::string d =
      compiled_step::ModelMismatch(compiled_step::LoadSidecar(Write(half, "d.pt2")), *model, 8, {3, 16, 16});
  EXPECT_NE(d.find("the package's is bfloat16 [64, 3, 7, 7], the model's float32 [64, 3, 7, 7]"), std::string::npos)
      << d;
  EXPECT_NE(d.find("model 'resnet18', 62 parameters and 60 buffers) does not fit the trial's model (62 parameters, 60 "
                   "buffers): parameter 'conv1.weight': the package's is bfloat16"),
            std::string::npos)
      << d;
  EXPECT_EQ(d.find('\n'), std::string::npos) << d;      // one difference: one line
  const auto first_line = st.substr(0, st.find('\n'));  // several: the first line names the first and counts the rest
  EXPECT_NE(first_line.find("buffers): parameter 'conv1.weight' [64, 3, 7, 7]: the package expects strides"),
            std::string::npos)
      << st;
  // resnet18's 17 convolutions wider than 1x1 differ; 8 are listed
  EXPECT_NE(first_line.find("; and 16 more, the first 7 of them:"), std::string::npos) << first_line;
}

TEST_F(CompiledStep, TheReleaseThatBuiltThePackageMustRunIt) {
  EXPECT_EQ(compiled_step::TorchMismatch("2.11.0+cu130", "2.11.0"), "");
  const std::string why = compiled_step::TorchMismatch("2.11.0+cu130", "2.10.1");
  EXPECT_NE(why.find("compiled by PyTorch 2.11.0+cu130, this runx runs LibTorch 2.10.1"), std::string::npos) << why;
}

TEST_F(CompiledStep, AMissingOrForeignSidecarSaysHowToMakeOne) {
  auto why = testing::Check("compiled_step", {{"package", (dir_ / "none.pt2").string()}}, Config(8), torch::kCPU);
  EXPECT_FALSE(why.ok);
  EXPECT_NE(why.reason.find("cannot read '" + (dir_ / "none.pt2.json").string() + "', the sidecar of package"),
            std::string::npos)
      << why.reason;
  EXPECT_NE(why.reason.find("tools/compile_step.py"), std::string::npos) << why.reason;
  why = testing::Check("compiled_step", {{"package", Write({{"format", "other"}}, "f.pt2")}}, Config(8), torch::kCPU);
  EXPECT_NE(why.reason.find("is not a compiled-step sidecar: 'format' is 'other', expected 'runx-compiled-step/1'"),
            std::string::npos)
      << why.reason;
}

TEST_F(CompiledStep, TheTrialMustRunWhatThePackageCompiled) {
  auto model = models::MakeResNet(18, 3, 10);
  const std::string pkg = Write(SidecarFor(*model, 8, {3, 16, 16}, "bf16", true));
  const json params{{"package", pkg}};
  const auto refused = [&](json config) {
    return testing::Check("compiled_step", params, std::move(config), torch::kCPU).reason;
  };

  EXPECT_NE(refused(Config(8, "fp32"))
                .find("computes in bf16 (its autocast is compiled in), the trial in fp32: set precision: bf16"),
            std::string::npos)
      << refused(Config(8, "fp32"));
  json contiguous = Config(8);
  contiguous["optimizations"].erase("channels_last");
  EXPECT_NE(
      refused(contiguous)
          .find("was compiled for channels-last tensors, the trial's are contiguous: add the channels_last technique"),
      std::string::npos)
      << refused(contiguous);
  EXPECT_NE(refused(Config(16)).find("is compiled for batch 8, the trial's data.batch_size is 16"), std::string::npos)
      << refused(Config(16));
  json searched = Config(8);
  searched["optimizations"]["auto_batch"] = json::object();
  EXPECT_NE(refused(searched).find("the batch size cannot be searched"), std::string::npos) << refused(searched);
  json anomaly = Config(8);
  anomaly["optimizations"]["anomaly"] = json::object();
  EXPECT_NE(refused(anomaly).find("a compiled step has none"), std::string::npos) << refused(anomaly);
  json infer = Config(8);
  infer["task"] = "infer";
  EXPECT_NE(refused(infer).find("compiled_step compiles a training step"), std::string::npos) << refused(infer);

  // Everything agrees: what is left is this build and this device.
  const std::string rest = refused(Config(8));
  if (!compat::kHasAotInductor)
    EXPECT_EQ(rest,
              "compiled_step needs LibTorch 2.6 or later (AOTInductor's package loader); this runx is built "
              "against LibTorch " +
                  compat::TorchVersionString());
  else
    EXPECT_NE(rest.find("the package was compiled for CUDA (NVIDIA H200); this trial runs on cpu"), std::string::npos)
        << rest;
}

// The sidecar tools/compile_step.py wrote on the H200 for torchvision's ResNet-50 (batch 256, bf16,
// channels-last; PyTorch 2.11), kept in tests/data: runx's own ResNet-50 must fit it exactly, names
// mapped (layer1.0. -> layer1_0.), shapes, dtypes and channels-last strides, 161 parameters and
// 159 buffers. It is the package runx's first GPU run refused over the 1x1 convolutions' strides.
TEST_F(CompiledStep, RunxsResNet50FitsTheSidecarWrittenForTorchvisionsOnTheGpu) {
  const std::string pkg = RUNX_SOURCE_DIR "/tests/data/compiled_step/resnet50-b256-bf16-cl.pt2";
  const auto s = compiled_step::LoadSidecar(pkg);
  EXPECT_EQ(s.torch, "2.11.0+cu130");
  EXPECT_EQ(s.batch, 256);
  auto model = models::MakeResNet(50, 3, 1000);
  const std::string contiguous = compiled_step::ModelMismatch(s, *model, 256, {3, 224, 224});
  // contiguous: every convolution wider than 1x1 differs (the stem and 16 3x3), nothing else
  EXPECT_NE(contiguous.find("(161 parameters, 159 buffers): parameter 'conv1.weight' [64, 3, 7, 7]: the package "
                            "expects strides [147, 1, 21, 3], the model's are [147, 49, 7, 1]"),
            std::string::npos)
      << contiguous;
  EXPECT_NE(contiguous.find("; and 16 more, the first 7 of them:"), std::string::npos) << contiguous;
  for (auto& p : model->parameters())
    if (p.dim() == 4) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));  // what channels_last does
  EXPECT_EQ(compiled_step::ModelMismatch(s, *model, 256, {3, 224, 224}), "");
}

// compile_step.py --model gpt builds tools/gpt_model.py's definition and names its tensors as runx's
// gpt has them; the file is what `compile_step.py --model gpt --n-layer 2 --n-head 2 --d-model 32
// --seq-len 16 --block-size 24 --print-parameters` printed (Debian's python3-torch). Same names,
// same shapes, nothing more on either side, tied output weights included.
TEST_F(CompiledStep, RunxsGptHasTheTensorsOfThePeerDefinitionCompileStepBuilds) {
  std::ifstream in(RUNX_SOURCE_DIR "/tests/data/compiled_step/gpt-parameters.json");
  const auto peer = nlohmann::json::parse(in);
  const auto model =
      models::BuildModel({{"name", "gpt"}, {"n_layer", 2}, {"n_head", 2}, {"d_model", 32}, {"block_size", 24}},
                         SampleSpec{{16}, c10::kLong, {16}, c10::kLong, 256}, torch::kCPU);
  nlohmann::json ours = nlohmann::json::object(), buffers = nlohmann::json::object();
  for (const auto& p : model->named_parameters()) ours[p.key()] = p.value().sizes().vec();
  for (const auto& b : model->named_buffers()) buffers[b.key()] = b.value().sizes().vec();
  EXPECT_EQ(ours.size(), 28u);
  EXPECT_EQ(ours, peer["parameters"]) << ours.dump() << "\n" << peer["parameters"].dump();
  EXPECT_EQ(buffers, peer["buffers"]);
  EXPECT_EQ(peer["shape"], nlohmann::json::array({16}));
}

}  // namespace
}  // namespace runx
