#include "spec/trial_config.h"

#include <utility>

#include <fmt/format.h>

#include "spec/identity.h"

namespace runx::spec {
namespace {

using json = nlohmann::json;

/// The keys of one JSON object, read by type; `where` is the object's path ("train.optimizer",
/// empty at the top), so that an error names the whole key.
class Reader {
 public:
  Reader(json object, std::string where) : object_(std::move(object)), where_(std::move(where)) {}

  const json* Find(const std::string& key) const {
    if (!object_.is_object()) return nullptr;
    const auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  std::string Path(const std::string& key) const { return where_.empty() ? key : where_ + "." + key; }

  [[noreturn]] void Fail(const std::string& key, const std::string& expected, const json& found) const {
    throw TrialConfigError(fmt::format("config key '{}': expected {}, got {}", Path(key), expected,
                                       found.dump(-1, ' ', false, json::error_handler_t::replace)));
  }

  std::string String(const std::string& key, std::string fallback) const {
    const json* v = Find(key);
    if (!v) return fallback;
    if (!v->is_string()) Fail(key, "a string", *v);
    return v->get<std::string>();
  }

  /// Numbers as nlohmann's get<int64_t> reads them (a float is truncated); anything else is an error.
  int64_t Integer(const std::string& key, int64_t fallback) const {
    const json* v = Find(key);
    if (!v) return fallback;
    if (!v->is_number()) Fail(key, "an integer", *v);
    return v->get<int64_t>();
  }

  std::optional<int64_t> OptionalInteger(const std::string& key) const {
    if (!Find(key)) return std::nullopt;
    return Integer(key, 0);
  }

  double Number(const std::string& key, double fallback) const {
    const json* v = Find(key);
    if (!v) return fallback;
    if (!v->is_number()) Fail(key, "a number", *v);
    return v->get<double>();
  }

  std::optional<double> OptionalNumber(const std::string& key) const {
    if (!Find(key)) return std::nullopt;
    return Number(key, 0);
  }

  /// A seed: an integer >= 0.
  uint64_t Seed(const std::string& key, uint64_t fallback) const {
    const json* v = Find(key);
    if (!v) return fallback;
    if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<int64_t>() < 0))
      Fail(key, "an integer >= 0", *v);
    return v->get<uint64_t>();
  }

  bool Bool(const std::string& key, bool fallback) const {
    const json* v = Find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) Fail(key, "true or false", *v);
    return v->get<bool>();
  }

  /// An object, or `fallback` when absent.
  json Object(const std::string& key, json fallback = json::object()) const {
    const json* v = Find(key);
    if (!v) return fallback;
    if (!v->is_object()) Fail(key, "a mapping", *v);
    return *v;
  }

  /// A required object.
  json Section(const std::string& key) const {
    const json* v = Find(key);
    if (!v) throw TrialConfigError(fmt::format("config key '{}' is missing", Path(key)));
    return Object(key);
  }

 private:
  json object_;  // a copy: the objects read are small, and often temporaries (Object's result)
  std::string where_;
};

Precision PrecisionFrom(const Reader& r) {
  const std::string text = r.String("precision", "fp32");
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16})
    if (text == Name(p)) return p;
  r.Fail("precision", "fp32, tf32, fp16 or bf16", text);
}

bool InferFrom(const Reader& r) {
  const std::string task = r.String("task", "train");
  if (task != "train" && task != "infer") r.Fail("task", "train or infer", task);
  return task == "infer";
}

StepsConfig StepsFrom(const json& config, bool infer) {
  const Reader top(config, "");
  const std::string section = infer ? "infer" : "train";
  const Reader r(top.Object(section), section);
  StepsConfig s;
  s.warmup_steps = r.Integer("warmup_steps", infer ? 10 : 5);
  s.steps = r.Integer("steps", infer ? 100 : 50);
  if (!infer) s.epochs = r.OptionalNumber("epochs");
  s.eval = r.Bool("eval", true);
  return s;
}

OptimizerConfig OptimizerFrom(const json& config) {
  const Reader train(Reader(config, "").Object("train"), "train");
  const Reader r(train.Object("optimizer", json{{"name", "sgd"}}), "train.optimizer");
  OptimizerConfig o;
  o.name = r.String("name", "sgd");
  if (o.adamw()) {
    o.lr = r.Number("lr", 1e-3);
    o.weight_decay = r.Number("weight_decay", 1e-2);
    if (const json* betas = r.Find("betas")) {
      if (!betas->is_array() || betas->size() != 2 || !(*betas)[0].is_number() || !(*betas)[1].is_number())
        r.Fail("betas", "two numbers [beta1, beta2]", *betas);
      o.betas = std::array<double, 2>{(*betas)[0].get<double>(), (*betas)[1].get<double>()};
    }
    o.eps = r.OptionalNumber("eps");
  } else {
    o.lr = r.Number("lr", 0.1);
    o.momentum = r.Number("momentum", 0.9);
    o.nesterov = r.Bool("nesterov", false);
    o.weight_decay = r.Number("weight_decay", 0.0);
  }
  return o;
}

}  // namespace

const char* Name(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
  }
  return "fp32";
}

DataConfig DataConfig::From(const json& data) {
  const Reader r(data, "data");
  if (!data.is_object())
    throw TrialConfigError(fmt::format("config key 'data': expected a mapping, got {}", data.dump()));
  DataConfig d;
  if (!r.Find("source")) throw TrialConfigError("config key 'data.source' is missing");
  d.source = r.String("source", "");
  const json* batch = r.Find("batch_size");
  if (!batch) throw TrialConfigError("config key 'data.batch_size' is missing");
  if (batch->is_string()) {
    d.batch_auto = true;  // "auto": the schema allows no other text
  } else {
    d.batch_size = r.Integer("batch_size", 1);
  }
  d.shuffle = r.Bool("shuffle", true);
  const std::string placement = r.String("placement", "device");
  if (placement != "device" && placement != "host") r.Fail("placement", "device or host", placement);
  d.host_placement = placement == "host";
  return d;
}

TrialConfig TrialConfig::From(const json& config) {
  if (!config.is_object())
    throw TrialConfigError(fmt::format("a trial's config must be a mapping, not {}", config.dump()));
  const Reader r(config, "");
  TrialConfig t;
  t.name = r.String("name", "experiment");
  t.device = r.String("device", "auto");
  t.precision = PrecisionFrom(r);
  t.seed = r.Seed("seed", 0);
  if (const auto threads = r.OptionalInteger("threads")) t.threads = static_cast<int>(*threads);
  t.infer = InferFrom(r);
  t.steps = StepsFrom(config, t.infer);
  t.optimizer = OptimizerFrom(config);
  t.model_section = r.Section("model");
  t.data_section = r.Section("data");
  t.data = DataConfig::From(t.data_section);
  t.techniques = ResolvedTechniques(config);
  if (t.techniques.contains("determinism")) {
    const Reader determinism(t.techniques["determinism"], "optimizations.determinism");
    if (determinism.Find("seed")) t.determinism_seed = determinism.Seed("seed", 0);
  }
  if (t.techniques.contains("data_parallel")) {
    DataParallelConfig dp;
    dp.world_size =
        static_cast<int>(Reader(t.techniques["data_parallel"], "optimizations.data_parallel").Integer("world_size", 1));
    t.data_parallel = dp;
  }
  return t;
}

}  // namespace runx::spec
