// The typed view of a trial's config (spec/trial_config.h): its defaults, every key it reads, and
// an error that names the key it cannot read.
#include "spec/trial_config.h"

#include <gtest/gtest.h>

namespace runx::spec::test {
namespace {

using nlohmann::json;

/// The least a trial's config holds: a model and a data source with its batch size.
json Minimal(json extra = json::object()) {
  json c = {{"model", {{"name", "mlp"}}}, {"data", {{"source", "synthetic"}, {"batch_size", 8}}}};
  c.merge_patch(extra);
  return c;
}

std::string ErrorOf(const json& config) {
  try {
    TrialConfig::From(config);
  } catch (const TrialConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TrialConfig, DefaultsOfATrainingTrial) {
  const TrialConfig t = TrialConfig::From(Minimal());
  EXPECT_EQ(t.name, "experiment");
  EXPECT_EQ(t.device, "auto");
  EXPECT_EQ(t.precision, Precision::kFp32);
  EXPECT_EQ(t.seed, 0u);
  EXPECT_FALSE(t.threads);
  EXPECT_FALSE(t.infer);
  EXPECT_EQ(t.steps.warmup_steps, 5);
  EXPECT_EQ(t.steps.steps, 50);
  EXPECT_FALSE(t.steps.epochs);
  EXPECT_TRUE(t.steps.eval);
  EXPECT_EQ(t.optimizer.name, "sgd");
  EXPECT_DOUBLE_EQ(t.optimizer.lr, 0.1);
  EXPECT_DOUBLE_EQ(t.optimizer.momentum, 0.9);
  EXPECT_FALSE(t.optimizer.nesterov);
  EXPECT_DOUBLE_EQ(t.optimizer.weight_decay, 0.0);
  EXPECT_FALSE(t.optimizer.betas);
  EXPECT_FALSE(t.optimizer.eps);
  EXPECT_EQ(t.data.source, "synthetic");
  EXPECT_EQ(t.data.batch_size, 8);
  EXPECT_FALSE(t.data.batch_auto);
  EXPECT_TRUE(t.data.shuffle);
  EXPECT_FALSE(t.data.host_placement);
  EXPECT_EQ(t.techniques, json::object());
  EXPECT_FALSE(t.determinism_seed);
  EXPECT_FALSE(t.data_parallel);
  EXPECT_EQ(t.ranks(), 0);
  EXPECT_EQ(t.trial_seed(), 0u);
  EXPECT_EQ(t.model_section, (json{{"name", "mlp"}}));
  EXPECT_EQ(t.data_section, (json{{"source", "synthetic"}, {"batch_size", 8}}));
}

TEST(TrialConfig, DefaultsOfAnInferenceTrialAndOfAdamw) {
  const TrialConfig infer = TrialConfig::From(Minimal({{"task", "infer"}, {"train", {{"steps", 7}}}}));
  EXPECT_TRUE(infer.infer);
  EXPECT_EQ(infer.steps.warmup_steps, 10);
  EXPECT_EQ(infer.steps.steps, 100);  // train's steps are not inference's
  const TrialConfig adamw = TrialConfig::From(Minimal({{"train", {{"optimizer", {{"name", "adamw"}}}}}}));
  EXPECT_TRUE(adamw.optimizer.adamw());
  EXPECT_DOUBLE_EQ(adamw.optimizer.lr, 1e-3);
  EXPECT_DOUBLE_EQ(adamw.optimizer.weight_decay, 1e-2);
  // No optimizer section, or one without a name: sgd.
  EXPECT_EQ(TrialConfig::From(Minimal({{"train", {{"optimizer", {{"lr", 0.5}}}}}})).optimizer.name, "sgd");
}

TEST(TrialConfig, ReadsEveryKey) {
  const TrialConfig t = TrialConfig::From(Minimal(
      {{"name", "mnist"},
       {"device", "cuda:1"},
       {"precision", "bf16"},
       {"seed", 42},
       {"threads", 3},
       {"train",
        {{"warmup_steps", 1},
         {"steps", 9},
         {"epochs", 1.5},
         {"eval", false},
         {"optimizer", {{"name", "sgd"}, {"lr", 0.2}, {"momentum", 0.5}, {"nesterov", true}, {"weight_decay", 1e-4}}}}},
       {"data", {{"shuffle", false}, {"placement", "host"}}},
       {"optimizations", {{"determinism", {{"seed", 11}}}, {"data_parallel", {{"world_size", 4}}}}}}));
  EXPECT_EQ(t.name, "mnist");
  EXPECT_EQ(t.device, "cuda:1");
  EXPECT_EQ(t.precision, Precision::kBf16);
  EXPECT_EQ(t.seed, 42u);
  EXPECT_EQ(t.threads, 3);
  EXPECT_EQ(t.steps.warmup_steps, 1);
  EXPECT_EQ(t.steps.steps, 9);
  EXPECT_EQ(t.steps.epochs, 1.5);
  EXPECT_FALSE(t.steps.eval);
  EXPECT_DOUBLE_EQ(t.optimizer.lr, 0.2);
  EXPECT_DOUBLE_EQ(t.optimizer.momentum, 0.5);
  EXPECT_TRUE(t.optimizer.nesterov);
  EXPECT_DOUBLE_EQ(t.optimizer.weight_decay, 1e-4);
  EXPECT_FALSE(t.data.shuffle);
  EXPECT_TRUE(t.data.host_placement);
  EXPECT_EQ(t.determinism_seed, 11u);
  EXPECT_EQ(t.trial_seed(), 11u);
  ASSERT_TRUE(t.data_parallel);
  EXPECT_EQ(t.data_parallel->world_size, 4);
  EXPECT_EQ(t.ranks(), 4);
  // bf16 implies amp (ResolvedTechniques), and the view lists it.
  EXPECT_TRUE(t.techniques.contains("amp"));

  const TrialConfig infer =
      TrialConfig::From(Minimal({{"task", "infer"}, {"infer", {{"warmup_steps", 0}, {"steps", 3}, {"eval", false}}}}));
  EXPECT_EQ(infer.steps.warmup_steps, 0);
  EXPECT_EQ(infer.steps.steps, 3);
  EXPECT_FALSE(infer.steps.eval);

  const TrialConfig adamw = TrialConfig::From(
      Minimal({{"train",
                {{"optimizer",
                  {{"name", "adamw"}, {"lr", 0.01}, {"weight_decay", 0.0}, {"betas", {0.8, 0.99}}, {"eps", 1e-6}}}}}}));
  EXPECT_DOUBLE_EQ(adamw.optimizer.lr, 0.01);
  EXPECT_DOUBLE_EQ(adamw.optimizer.weight_decay, 0.0);
  ASSERT_TRUE(adamw.optimizer.betas);
  EXPECT_DOUBLE_EQ((*adamw.optimizer.betas)[0], 0.8);
  EXPECT_DOUBLE_EQ((*adamw.optimizer.betas)[1], 0.99);
  EXPECT_EQ(adamw.optimizer.eps, 1e-6);
}

TEST(TrialConfig, BatchSizeAutoIsOneUntilAutoBatchSetsIt) {
  const TrialConfig t = TrialConfig::From(Minimal({{"data", {{"batch_size", "auto"}}}}));
  EXPECT_TRUE(t.data.batch_auto);
  EXPECT_EQ(t.data.batch_size, 1);
  EXPECT_TRUE(t.techniques.contains("auto_batch"));
}

TEST(TrialConfig, RanksAreDataParallelsWorldSize) {
  // One reading of the world size for both processes: the parent starts ranks() processes (sweep/child.cc).
  EXPECT_EQ(TrialConfig::From(Minimal()).ranks(), 0);
  EXPECT_EQ(TrialConfig::From(Minimal({{"optimizations", {{"data_parallel", {{"world_size", 4}}}}}})).ranks(), 4);
  EXPECT_EQ(TrialConfig::From(Minimal({{"optimizations", {{"data_parallel", json::object()}}}})).ranks(), 1);
}

TEST(TrialConfig, AKeyOfTheWrongTypeIsNamed) {
  EXPECT_EQ(ErrorOf(Minimal({{"device", 0}})), "config key 'device': expected a string, got 0");
  EXPECT_EQ(ErrorOf(Minimal({{"precision", "fp64"}})),
            "config key 'precision': expected fp32, tf32, fp16 or bf16, got \"fp64\"");
  EXPECT_EQ(ErrorOf(Minimal({{"seed", -1}})), "config key 'seed': expected an integer >= 0, got -1");
  EXPECT_EQ(ErrorOf(Minimal({{"threads", "four"}})), "config key 'threads': expected an integer, got \"four\"");
  EXPECT_EQ(ErrorOf(Minimal({{"task", "tune"}})), "config key 'task': expected train or infer, got \"tune\"");
  EXPECT_EQ(ErrorOf(Minimal({{"train", {{"steps", "ten"}}}})),
            "config key 'train.steps': expected an integer, got \"ten\"");
  EXPECT_EQ(ErrorOf(Minimal({{"train", {{"eval", "no"}}}})),
            "config key 'train.eval': expected true or false, got \"no\"");
  EXPECT_EQ(ErrorOf(Minimal({{"train", {{"epochs", true}}}})),
            "config key 'train.epochs': expected a number, got true");
  EXPECT_EQ(ErrorOf(Minimal({{"task", "infer"}, {"infer", {{"warmup_steps", false}}}})),
            "config key 'infer.warmup_steps': expected an integer, got false");
  EXPECT_EQ(ErrorOf(Minimal({{"train", {{"optimizer", {{"lr", "fast"}}}}}})),
            "config key 'train.optimizer.lr': expected a number, got \"fast\"");
  EXPECT_EQ(ErrorOf(Minimal({{"train", {{"optimizer", {{"name", "adamw"}, {"betas", {0.9}}}}}}})),
            "config key 'train.optimizer.betas': expected two numbers [beta1, beta2], got [0.9]");
  EXPECT_EQ(ErrorOf(Minimal({{"train", 3}})), "config key 'train': expected a mapping, got 3");
  EXPECT_EQ(ErrorOf(Minimal({{"data", {{"shuffle", 1}}}})), "config key 'data.shuffle': expected true or false, got 1");
  EXPECT_EQ(ErrorOf(Minimal({{"data", {{"batch_size", true}}}})),
            "config key 'data.batch_size': expected an integer, got true");
  EXPECT_EQ(ErrorOf(Minimal({{"data", {{"placement", "disk"}}}})),
            "config key 'data.placement': expected device or host, got \"disk\"");
  EXPECT_EQ(ErrorOf(Minimal({{"optimizations", {{"data_parallel", {{"world_size", "two"}}}}}})),
            "config key 'optimizations.data_parallel.world_size': expected an integer, got \"two\"");
  EXPECT_EQ(ErrorOf(Minimal({{"optimizations", {{"determinism", {{"seed", "x"}}}}}})),
            "config key 'optimizations.determinism.seed': expected an integer >= 0, got \"x\"");
}

TEST(TrialConfig, AMissingSectionOrDataKeyIsNamed) {
  json no_model = Minimal();
  no_model.erase("model");
  EXPECT_EQ(ErrorOf(no_model), "config key 'model' is missing");
  json no_batch = Minimal();
  no_batch["data"].erase("batch_size");
  EXPECT_EQ(ErrorOf(no_batch), "config key 'data.batch_size' is missing");
  json no_source = Minimal();
  no_source["data"].erase("source");
  EXPECT_EQ(ErrorOf(no_source), "config key 'data.source' is missing");
}

TEST(TrialConfig, PrecisionNames) {
  for (const char* name : {"fp32", "tf32", "fp16", "bf16"})
    EXPECT_STREQ(Name(TrialConfig::From(Minimal({{"precision", name}})).precision), name);
}

}  // namespace
}  // namespace runx::spec::test
