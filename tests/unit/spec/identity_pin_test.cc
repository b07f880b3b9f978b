// The config identities of today's experiments and of one config per model and data source,
// pinned to the hashes runx recorded before the catalogue (spec/catalogue.h) replaced the rules
// written in identity.cc and checks.cc: a store's results are reused only while these stay
// byte-identical. A failing line is a change of stored identities: fix the code, not the literal.
// Only an edited, added or removed file in experiments/ changes its own lines (and only those).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "spec/identity.h"
#include "spec/plan.h"
#include "spec/spec.h"
#include "spec/sweep.h"

namespace runx::spec {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kSource = RUNX_SOURCE_DIR;
const std::string kInputs = std::string(RUNX_SPEC_TEST_DATA) + "/identity";

/// The experiment schema and the parameter schemas of the techniques in plugins/ (as the build
/// installs them beside the plugins).
SchemaSet AllSchemas() {
  SchemaSet schemas = SchemaSet::Load({});
  for (const auto& dir : fs::directory_iterator(kSource + "/plugins")) {
    const fs::path file = dir.path() / "schema.json";
    if (!fs::exists(file)) continue;
    std::ifstream in(file);
    schemas.techniques[dir.path().filename().string()] = json::parse(in);
  }
  return schemas;
}

/// Runs in the source tree (experiments name their files relative to it), then goes back.
class InSourceTree {
 public:
  InSourceTree() : before_(fs::current_path()) { fs::current_path(kSource); }
  ~InSourceTree() { fs::current_path(before_); }

 private:
  fs::path before_;
};

/// Files outside the repository (the fortunes text, the Fashion-MNIST folder) differ between
/// machines; the experiments read copies of fixed content instead (a path is no part of the hash).
std::vector<Override> FixedInputs(const std::string& file) {
  if (file == "gpt-text.yaml" || file == "gpt-text-gpu.yaml") return {{"data.path=" + kInputs + "/text.txt"}};
  if (file == "quickstart.yaml") return {{"data.path=" + kInputs + "/fashion"}};
  return {};
}

void ExpectPinned(const std::map<std::string, std::string>& pinned, const std::map<std::string, std::string>& got) {
  std::string literal;
  for (const auto& [key, hash] : got) literal += "      {\"" + key + "\", \"" + hash + "\"},\n";
  EXPECT_EQ(got, pinned) << "the identities now:\n" << literal;
}

TEST(IdentityPin, EveryExperimentKeepsItsStoredHashes) {
  const InSourceTree here;
  const SchemaSet schemas = AllSchemas();
  std::map<std::string, std::string> got;
  for (const auto& entry : fs::directory_iterator("experiments")) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string file = entry.path().filename().string();
    const Plan plan = Expand(Load(entry.path().string(), FixedInputs(file), schemas), schemas);
    for (const auto& trial : plan.trials) got[file + " " + trial.label] = IdentifyConfig(trial.config).hash;
  }
  const std::map<std::string, std::string> pinned = {
      {"article-table.yaml baseline", "c2b9c3fc6a46a2212fbc72126f65aafeeb719f4aca7bc86e140de3aab32bb650"},
      {"article-table.yaml bf16", "1422237050d0660032d0df83a6147ec89c75d391b27fe470bb9f8fcf5f985028"},
      {"article-table.yaml bf16+channels_last+fused_optimizer+cuda_graphs+memory",
       "54d5846b9ac99ea126e2ea7226cce76724c0e0c0f8b7903d3eb431036b2fad6b"},
      {"article-table.yaml channels_last", "1b68cc3bfd5b67974740fd03545a9e053c8083d3202e2aa54a74aa888773a586"},
      {"article-table.yaml cuda_graphs", "80d04a2ebe71bd8e1683db65eb2e4e81bd9692b4ac32fd8b11ebb96de1bcac67"},
      {"article-table.yaml fused_optimizer", "843eb77f0d1efcdf14878d619f6d83ae1f274c71ab3416db7b8d723818373315"},
      {"article-table.yaml memory", "0e82e4209b61a8abdc0a1ba095480944eb2acdc20bb78bf337112705aa7a33c1"},
      {"compiled-step-resnet50.yaml baseline", "3fe0ed5360f58df2be50a0f59246d65b0bba79e5378db4d9e164992b12a43fea"},
      {"compiled-step-resnet50.yaml compiled_step", "fa4ba76cc20dbad70e9d2198b3599c2ae57e3161264fe27261cf89506bb419cd"},
      {"compiled-step-resnet50.yaml compiled_step+fused_optimizer+cuda_graphs",
       "a40750c006b0be998c5e761003f523dce41b267d6624ce0c87886dbdead48a72"},
      {"compiled-step-resnet50.yaml cuda_graphs", "9e20b544c05b14c01497b77e4fbe7c12b5f7011d4b7637e06928f53e80d4b687"},
      {"compiled-step-resnet50.yaml fused_optimizer",
       "3b43a49e66f4b4e9205e2162857b4b06c851a35df0cdbdf5d234f7a06c4217ee"},
      {"gpt-text-gpu.yaml baseline", "62fcd5527a031d96ab148c429f3dad455c8cac6556630eb501972f4d48543671"},
      {"gpt-text-gpu.yaml bf16", "7c37a428a73d693fac7b4cc969637852a0d961f57b31eb8dd48126fc653367eb"},
      {"gpt-text-gpu.yaml bf16+compiled_step", "35779ccbf5b0eb7d744d97f15b9454eb5967fa59b901e45a0a75595406dcb0f8"},
      {"gpt-text-gpu.yaml bf16+cuda_graphs", "a1602f7f4d2bb0f9d05dc3296bc63bc916527fd644129655d0060e5c73942278"},
      {"gpt-text-gpu.yaml bf16+cuda_graphs+compiled_step",
       "2562021bd2a8850f63ab93e6e2900984e4db6b8698351b78fd15484fa8b94ab8"},
      {"gpt-text-gpu.yaml bf16+fused_optimizer", "4648155bf44a3fc9ff30b6d271e8c35f7c2c45c136b8663194bc2595b78d120f"},
      {"gpt-text-gpu.yaml bf16+fused_optimizer+compiled_step",
       "78223f761eaf14135e4dc2d407b1aa97c7722f1c9f474a284306b419aec68602"},
      {"gpt-text-gpu.yaml bf16+fused_optimizer+cuda_graphs",
       "522ad556d46b4593cc426817e41b4ce9605dd209bb66ad959303a09fb97c21b4"},
      {"gpt-text-gpu.yaml bf16+fused_optimizer+cuda_graphs+compiled_step",
       "a05c8ba63eaf931b7a97791be8a3c66387058ebf5977592f1db5e357c2688351"},
      {"gpt-text-gpu.yaml compiled_step", "349ff2602a7c68f51f31d6ab048d85712eaf744e926118a636ba9536cad5a3ef"},
      {"gpt-text-gpu.yaml cuda_graphs", "84fb353b9517461af5c3877799d52ccea2d98b213fa04d09310caaa4b14eb495"},
      {"gpt-text-gpu.yaml cuda_graphs+compiled_step",
       "5f198df2a9e50cbaa321d242d2dcb7585d84b668f5bde8039653ba9d4b275164"},
      {"gpt-text-gpu.yaml fused_optimizer", "a0954d41ac3006f2b2f418c8736b17ff46907c76ee9f58cccbcd9fa348a1cef6"},
      {"gpt-text-gpu.yaml fused_optimizer+compiled_step",
       "28d6bfca314574ac8cbd25d498581b391e912d65dfed95519f43cb8fbf6ac5f4"},
      {"gpt-text-gpu.yaml fused_optimizer+cuda_graphs",
       "597d53926b79b8a692e5ed188e5e7cb83591ddbd092755f30aa5f0cb0e96739b"},
      {"gpt-text-gpu.yaml fused_optimizer+cuda_graphs+compiled_step",
       "90d6b40180d72dd4f7e31c70f6a2b9e07f1a8db8ace3eadaeceb949efd147f13"},
      {"gpt-text.yaml baseline", "27a9c607ea6268c799f1f5b00f2c90fd2fdfb47c1c653a9ee8fce1110aa6039a"},
      {"python-model.yaml baseline", "472c69a2dc33f20a5ecb6affd886e053ad63eb0294816abc3b348c0a6f5c7d6c"},
      {"python-model.yaml compiled_step", "6b6a1fea15ab1c7359dd8926aa6820ff496c39aa3621e8516494dc9b1904364c"},
      {"quickstart.yaml baseline", "f0054100d3fc1f9416f817fb64e899890912efd608f6de96cd96a624611bcc1e"},
      {"resnet50-ablation.yaml baseline", "82312ea5536488f76a43a19b4afeeb67440c3f2405f2eb1bebd067eaa0647eb1"},
      {"resnet50-ablation.yaml bf16", "acd3a441fa857e9e366abc87124f6f8363971b70016562ade0d37c9a24df3e08"},
      {"resnet50-ablation.yaml bf16+channels_last", "91b0ad691633f076346b103b5d00bd22739671820248d10b4fbb23fe734f7257"},
      {"resnet50-ablation.yaml channels_last", "48bd9a93364ee8579be2205fa3a690d9f41fa988ed8467777456e1bacbdc7eb2"},
      {"resnet50-inference.yaml baseline", "f028503f29868bf6a6741ffcbcf7964f0f76986151a78ddc671be412a7f05bff"},
      {"resnet50-inference.yaml bf16", "30d996353a4d0d835fb8e7f778509ba02f49f8499a77e3bb089efb42a5a3b593"},
      {"resnet50-inference.yaml bf16+channels_last+cuda_graphs",
       "578b1a30cabb23e300bec3030711fa7860ba380dfe8aead82cc04a58e9bb6687"},
      {"resnet50-inference.yaml channels_last", "113f96fd2e5cb3ce7361378bac79ef39c79839b90dfc4534ccba3284835af6d7"},
      {"resnet50-inference.yaml cuda_graphs", "b95013f9c7f23aaba762def4b76c0124c75b447eb2b19e899482590d529d1f96"},
      {"resnet50.yaml bf16+channels_last", "6415aada1334221c34e7bda5475c6ae2cbd79a0a601166fea645618a003badea"},
  };
  ExpectPinned(pinned, got);
}

/// A resolved config with every model key and every data key set, whatever the model or source
/// reads: the identity keeps exactly the keys the chosen one reads, and hashes its input files.
json EveryKey(const std::string& model, const std::string& source, const std::string& text_path) {
  json config = json::parse(R"({
    "name": "pin", "device": "cpu", "seed": 3, "task": "train", "precision": "fp32", "repeats": 2,
    "train": {"steps": 3, "warmup_steps": 1, "optimizer": {"name": "sgd", "lr": 0.1}},
    "infer": {"steps": 5},
    "model": {"hidden": [16], "channels": [4, 8], "dropout": 0.1, "jit_optimize": true,
              "builder": "build", "kwargs": {"width": 8}, "artifact": "compiled/x.pt", "model_name": "model",
              "n_layer": 2, "n_head": 2, "d_model": 16, "block_size": 32, "num_classes": 10},
    "data": {"shape": [1, 28, 28], "num_classes": 10, "batch_size": 8, "dtype": "uint8",
             "label_dtype": "int64", "scale": 0.5, "normalize": {"mean": 0.2, "std": 0.3},
             "placement": "host", "produce_ms": 2, "tokenizer": "chars", "seq_len": 16,
             "val_fraction": 0.2, "train_limit": 100, "shuffle": false}
  })");
  config["model"]["name"] = model;
  config["model"]["path"] = kInputs + "/model.pt";
  config["data"]["source"] = source;
  config["data"]["path"] = source == "text"            ? text_path
                           : source == "fashion-mnist" ? kInputs + "/fashion"
                                                       : kInputs + "/inputs.npy";
  config["data"]["labels"] = kInputs + "/labels.npy";
  config["data"]["eval_path"] = kInputs + "/eval_inputs.npy";
  config["data"]["eval_labels"] = kInputs + "/eval_labels.npy";
  return config;
}

TEST(IdentityPin, EachModelAndDataSourceKeepsItsHash) {
  std::map<std::string, std::string> got;
  for (const char* model : {"mlp", "cnn", "resnet18", "resnet50", "gpt", "torchscript", "aoti", "python"})
    got[std::string("model ") + model] = IdentifyConfig(EveryKey(model, "synthetic", "")).hash;
  for (const char* source : {"synthetic", "fashion-mnist", "memmap", "text"})
    got[std::string("data ") + source] = IdentifyConfig(EveryKey("mlp", source, kInputs + "/text.txt")).hash;
  got["data text folder"] = IdentifyConfig(EveryKey("gpt", "text", kInputs + "/texts")).hash;
  got["data memmap missing labels"] = [] {
    const InSourceTree here;  // the message of an unreadable file names its path: a relative one
    json config = EveryKey("cnn", "memmap", "");
    config["data"]["labels"] = "tests/unit/spec/data/identity/no-such-file.npy";
    return IdentifyConfig(config).hash;
  }();
  const std::map<std::string, std::string> pinned = {
      {"data fashion-mnist", "834cfed2fab851058d3d05969056a498d236b7ed9c41f9d1378ab57cb4262133"},
      {"data memmap", "1a8119e1e59eeee8b55b5fba89ca06cd439eb363047c4eb88dc7d2a9ccd66eb3"},
      {"data memmap missing labels", "163be27978abdfaea3b1e8236d2bc1c7d299a86002a7cd1e2759a55160a57d1d"},
      {"data synthetic", "27bfd106c72cadd80420308cf2000e6093249183a145ffd0a186a9985632924f"},
      {"data text", "1711297c245e7be689e41a0bb99f180dc32dc182a4d43bbecc35d6880fa6429f"},
      {"data text folder", "4105f80dc7a5d463b0e896918acdfd274b29fe11cd7f63613188e466df16b270"},
      {"model aoti", "10713a3b862b684f8afe7a1b78d7d7cbcc0c54dc61211d4d6a540cd7a2ede16f"},
      {"model cnn", "71f3342996a3be54c93f6fd0fe54c1e476013fca2b697cf92714dc9a36779559"},
      {"model gpt", "406c9aa8b9960c4f4f5d82076a5af48f95129c1ed76ee2867e4f45193aad7fe0"},
      {"model mlp", "27bfd106c72cadd80420308cf2000e6093249183a145ffd0a186a9985632924f"},
      {"model python", "a712fbb8a568510c05a44d8ea7a1d1d4f5ceeddb68b9c7419b362e3c8f4b5f9d"},
      {"model resnet18", "3ba9b6bf5506ebe363fc7e896dcf3fab9588e3c56535ef9e25571c304a66e290"},
      {"model resnet50", "91edd9c06c6c6ca9ede385fac3c9468e5d179269213f8f5a9e7292c12053684f"},
      {"model torchscript", "3e3cc5b5f505c61d75f081beb4f56feb96b589355d0228cc7e804523b1f2a8ca"},
  };
  ExpectPinned(pinned, got);
}

}  // namespace
}  // namespace runx::spec
