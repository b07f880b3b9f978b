#include "engine/trial.h"
#include "spec/identity.h"
#include "spec/label.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <new>
#include <optional>

#include <unistd.h>

#include <ATen/Context.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include "data/data.h"
#include "engine/device.h"
#include "engine/environment.h"
#include "engine/host_memory.h"
#include "engine/stats.h"
#include "models/models.h"
#include "plugins/loader.h"
#include "runx/plugin.h"

namespace runx::engine {
namespace {

using Clock = std::chrono::steady_clock;

/// A failure of a technique hook, carrying the technique's name for the message.
struct TechniqueFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Thrown by the runner when a technique called TrialContext::abort before training began.
struct TrialAborted {};

struct Active {
  std::string name;
  std::unique_ptr<Technique> technique;
};

/// Calls `fn` on every technique; an exception names the technique and the hook.
template <typename Fn>
void ForEach(std::vector<Active>& active, const char* hook, Fn&& fn) {
  for (auto& a : active) {
    try {
      fn(*a.technique);
    } catch (const std::bad_alloc&) {
      throw;  // out of memory is the trial's status, whoever asked for the memory
    } catch (const std::exception& e) {
      throw TechniqueFailure(fmt::format("technique '{}' failed in {}: {}", a.name, hook, e.what()));
    }
  }
}

std::string Classify(const std::string& what);
std::string FirstLine(const std::string& s);

class Context : public TrialContext {
 public:
  Context(const nlohmann::json& config, c10::Device device, store::TrialRecord& rec,
          std::vector<std::string>& notes, std::vector<Active>& active)
      : config_(config), device_(device), rec_(rec), notes_(notes), active_(active) {}
  const nlohmann::json& config() const override { return config_; }
  c10::Device device() const override { return device_; }
  torch::nn::Module& model() override { return *model_; }
  torch::optim::Optimizer& optimizer() override {
    if (!optimizer_) throw std::logic_error("task 'infer' has no optimizer");
    return *optimizer_;
  }
  bool has_technique(std::string_view name) const override {
    return std::any_of(active_.begin(), active_.end(), [&](const Active& a) { return a.name == name; });
  }
  void metric(std::string_view name, double value, std::string_view unit = "", int64_t step = -1) override {
    store::MetricRow m{std::string(name), value, std::string(unit), {}};
    if (step >= 0) m.step = step;
    rec_.metrics.push_back(std::move(m));
  }
  void note(std::string_view text) override { notes_.emplace_back(text); }
  void record(std::string_view key, std::string_view value) override {
    rec_.environment[std::string(key)] = std::string(value);
  }
  torch::Tensor forward(const torch::Tensor& input) override { return model_->forward(input); }
  std::vector<int64_t> sample_shape() const override { return data_->sample_shape(); }
  int64_t batch_size() const override { return data_->batch_size(); }
  void set_batch_size(int64_t n) override {
    if (!in_train_begin_) throw std::logic_error("set_batch_size is only allowed in on_train_begin");
    if (n < 1) throw std::invalid_argument(fmt::format("batch size must be positive, not {}", n));
    data_->set_batch_size(n);
  }
  ProbeResult probe_batch(int64_t n, int steps) override;
  void abort(std::string_view status, std::string_view why) override {
    if (abort_status_.empty()) {
      abort_status_ = std::string(status);
      abort_why_ = std::string(why);
    }
  }
  std::string artifact_dir() override {
    if (artifact_dir_.empty()) {
      const char* root = std::getenv("RUNX_ARTIFACT_DIR");
      auto dir = std::filesystem::path(root && *root ? root : "results/artifacts") /
                 config_.value("name", std::string("experiment")) /
                 fmt::format("{}-{}-{}", rec_.label, CompactTime(rec_.started_at), ::getpid());
      std::filesystem::create_directories(dir);
      artifact_dir_ = std::filesystem::absolute(dir).string();
      record("artifact_dir", artifact_dir_);
    }
    return artifact_dir_;
  }

  int64_t host_memory_limit() const override { return host_memory::Limit(); }
  void set_host_memory_limit(int64_t bytes) override { host_memory::SetLimit(bytes); }

  /// After on_train_begin: no more probes, so the weights they restored from are freed.
  void EndTrainBegin() {
    in_train_begin_ = false;
    snapshot_.clear();
    snapshot_.shrink_to_fit();
  }

  bool aborted() const { return !abort_status_.empty(); }
  const std::string& abort_status() const { return abort_status_; }
  const std::string& abort_why() const { return abort_why_; }

  std::shared_ptr<models::Model> model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  data::DataSource* data_ = nullptr;
  Step* step_ = nullptr;
  bool in_train_begin_ = false;

 private:
  static std::string CompactTime(const std::string& iso) {
    std::string out;
    for (char c : iso)
      if (std::isalnum(static_cast<unsigned char>(c))) out += c;
    return out;
  }
  const nlohmann::json& config_;
  c10::Device device_;
  store::TrialRecord& rec_;
  std::vector<std::string>& notes_;
  std::vector<Active>& active_;
  std::string abort_status_, abort_why_, artifact_dir_;
  std::vector<torch::Tensor> snapshot_;
};

ProbeResult Context::probe_batch(int64_t n, int steps) {
  if (!in_train_begin_) throw std::logic_error("probe_batch is only allowed in on_train_begin");
  ProbeResult r;
  r.batch_size = n;
  auto tensors = [this] {
    std::vector<torch::Tensor> all = model_->parameters();
    for (auto& b : model_->buffers()) all.push_back(b);
    return all;
  };
  if (snapshot_.empty()) {
    torch::NoGradGuard no_grad;
    for (auto& t : tensors()) snapshot_.push_back(t.detach().clone());
  }
  ReleaseCache(device_);
  Synchronize(device_);
  ResetPeakMemory(device_);
  try {
    std::vector<int64_t> shape{n};
    for (auto d : data_->sample_shape()) shape.push_back(d);
    Batch batch{torch::randn(shape, torch::TensorOptions().device(device_)),
                torch::randint(data_->num_classes(), {n}, torch::TensorOptions().device(device_).dtype(torch::kLong))};
    ForEach(active_, "on_batch", [&](Technique& t) { t.on_batch(batch, *this); });
    std::vector<double> ms;
    for (int i = 0; i <= steps; ++i) {
      const auto t0 = Clock::now();
      torch::Tensor loss = step_->forward(batch);
      step_->backward(loss);
      step_->update();
      Synchronize(device_);
      if (i > 0) ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    r.fits = true;
    r.step_ms = ms.empty() ? 0.0 : Quantile(ms, 0.5);
    r.peak_bytes = PeakMemoryBytes(device_);
  } catch (const std::bad_alloc&) {
    r.error = "out of host memory (std::bad_alloc)";
  } catch (const std::exception& e) {
    if (Classify(e.what()) != "oom") throw;
    r.error = FirstLine(e.what());
  }
  // Undo the probe: weights, buffers, gradients and optimizer state as they were.
  {
    torch::NoGradGuard no_grad;
    auto all = tensors();
    for (size_t i = 0; i < all.size() && i < snapshot_.size(); ++i) all[i].copy_(snapshot_[i]);
    for (auto& p : model_->parameters()) p.mutable_grad() = torch::Tensor();
    if (optimizer_) optimizer_->state().clear();
  }
  Synchronize(device_);
  ReleaseCache(device_);
  return r;
}

/// Device-resident data: batches come ready from the source.
class DeviceLoader : public Loader {
 public:
  explicit DeviceLoader(data::DataSource& data) : data_(data) {}
  Batch next() override { return data_.Next(); }

 private:
  data::DataSource& data_;
};

/// Host data seen by a technique's loader.
class HostView : public HostBatches {
 public:
  explicit HostView(const data::DataSource& data) : data_(data) {}
  Batch get(int64_t index) const override { return data_.Get(index); }
  int64_t batch_size() const override { return data_.batch_size(); }
  int64_t batches_per_epoch() const override { return data_.batches_per_epoch(); }
  Batch prepare(Batch on_device) const override { return data_.Prepare(std::move(on_device)); }

 private:
  const data::DataSource& data_;
};

/// The default loader for host data: fetch batch i when asked, then copy it to the device, staged
/// through pinned memory with a non-blocking copy on CUDA.
class HostLoader : public Loader {
 public:
  HostLoader(const data::DataSource& data, c10::Device device) : data_(data), device_(device) {}
  Batch next() override {
    Batch b = data_.Get(index_++);
    if (device_.is_cpu()) return data_.Prepare(std::move(b));
    const bool pin = device_.is_cuda();
    auto move = [&](const torch::Tensor& t) {
      return (pin ? t.pin_memory() : t).to(device_, /*non_blocking=*/pin);
    };
    return data_.Prepare({move(b.input), move(b.target)});
  }

 private:
  const data::DataSource& data_;
  c10::Device device_;
  int64_t index_ = 0;
};

std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const nlohmann::json& config, torch::nn::Module& model) {
  const auto opt = config.value("train", nlohmann::json::object()).value("optimizer", nlohmann::json{{"name", "sgd"}});
  const std::string name = opt.value("name", "sgd");
  if (name == "adamw") {
    auto o = torch::optim::AdamWOptions(opt.value("lr", 1e-3)).weight_decay(opt.value("weight_decay", 1e-2));
    if (opt.contains("betas")) o.betas({opt["betas"][0].get<double>(), opt["betas"][1].get<double>()});
    if (opt.contains("eps")) o.eps(opt["eps"].get<double>());
    return std::make_unique<torch::optim::AdamW>(model.parameters(), o);
  }
  auto o = torch::optim::SGDOptions(opt.value("lr", 0.1))
               .momentum(opt.value("momentum", 0.9))
               .nesterov(opt.value("nesterov", false))
               .weight_decay(opt.value("weight_decay", 0.0));
  return std::make_unique<torch::optim::SGD>(model.parameters(), o);
}

std::string Classify(const std::string& what) {
  std::string lower = what;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  if (lower.find("out of memory") != std::string::npos || lower.find("can't allocate memory") != std::string::npos)
    return "oom";
  return "failed";
}

/// First line of an exception message (LibTorch appends multi-line backtraces).
std::string FirstLine(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

/// Accuracy on the held-out split, `forward` mapping a batch to logits: the model's own forward
/// pass after training, the wrapped (optimized) step for `task: infer`.
double Accuracy(models::Model& model, data::DataSource& data, std::vector<Active>& active, TrialContext& ctx,
                const std::function<torch::Tensor(Batch&)>& forward) {
  auto eval = data.EvalSet();
  if (!eval) return std::nan("");
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  int64_t correct = 0;
  const int64_t n = eval->input.size(0), chunk = 1000;
  torch::Tensor hits = torch::zeros({}, torch::TensorOptions().device(eval->input.device()).dtype(torch::kLong));
  for (int64_t i = 0; i < n; i += chunk) {
    const int64_t len = std::min(chunk, n - i);
    Batch b{eval->input.narrow(0, i, len), eval->target.narrow(0, i, len)};
    ForEach(active, "on_batch", [&](Technique& t) { t.on_batch(b, ctx); });
    hits += forward(b).argmax(1).eq(b.target).sum();
  }
  correct = hits.item<int64_t>();
  model.train(was_training);
  return static_cast<double>(correct) / static_cast<double>(n);
}

}  // namespace

nlohmann::json EffectiveTechniques(const nlohmann::json& config) { return spec::ResolvedTechniques(config); }

store::TrialRecord RunTrial(const nlohmann::json& config, const plugins::Registry& registry,
                            const TrialOptions& options) {
  store::TrialRecord rec;
  rec.config_json = config.dump();
  rec.label = spec::LabelTrial(config).label;
  rec.started_at = UtcNow();
  rec.status = "ok";
  std::vector<std::string> notes;

  c10::Device device(c10::DeviceType::CPU);
  try {
    device = SelectDevice(config.value("device", "auto"));
  } catch (const DeviceError& e) {
    rec.status = "failed";
    rec.error = e.what();
    rec.finished_at = UtcNow();
    return rec;
  }
  rec.device = device.str();
  rec.environment = TrialEnvironment(device);

  std::vector<Active> active;
  host_memory::Install();  // counts CPU tensors: peak host memory, and a limit when one is set
  Context ctx(config, device, rec, notes, active);
  try {
    // Techniques: create, configure, check.
    const auto techniques = EffectiveTechniques(config);
    for (auto& [name, params] : techniques.items()) {
      try {
        active.push_back({name, registry.Create(name, params)});
      } catch (const std::exception& e) {
        throw TechniqueFailure(fmt::format("technique '{}': {}", name, e.what()));
      }
      auto verdict = active.back().technique->check(config, device);
      if (!verdict.ok) {
        rec.status = "incompatible";
        rec.error = fmt::format("{}: {}", name, verdict.reason);
        rec.finished_at = UtcNow();
        return rec;
      }
      const auto* p = registry.Find(name);
      rec.environment["plugin." + name] = p->descriptor->version;
    }

    // Global numerics: PyTorch's defaults, plus cuDNN autotuning for the fixed shapes of a trial.
    // The experiment's seed, or determinism's own when it sets one: it then governs everything
    // seeded here (data, initial weights), not only what happens after its on_setup.
    const auto& effective = EffectiveTechniques(config);
    const uint64_t seed = effective.contains("determinism") && effective["determinism"].contains("seed")
                              ? effective["determinism"]["seed"].get<uint64_t>()
                              : config.value("seed", uint64_t{0});
    torch::manual_seed(seed);
    if (device.is_cuda()) {
      at::globalContext().setBenchmarkCuDNN(true);
      at::globalContext().setAllowTF32CuBLAS(config.value("precision", "fp32") == "tf32");
    }
    ForEach(active, "on_setup", [&](Technique& t) { t.on_setup(ctx); });

    auto data = data::MakeDataSource(config.at("data"), device, seed);
    ctx.data_ = data.get();
    torch::manual_seed(seed);
    ctx.model_ = models::BuildModel(config.at("model"), data->sample_shape(), data->num_classes(), device);
    ctx.model_->to(device);
    ctx.metric("param_count", static_cast<double>(models::ParameterCount(*ctx.model_)));
    ForEach(active, "on_model", [&](Technique& t) { t.on_model(*ctx.model_, ctx); });
    const bool infer = IsInference(config);
    auto* model = ctx.model_.get();
    Step step;
    // Inference: no autograd from here on (the measured passes, probes, graph capture, accuracy).
    std::optional<c10::InferenceMode> inference_mode;
    if (infer) {
      model->eval();
      inference_mode.emplace();
      step.forward = [model](Batch& b) { return model->forward(b.input); };
      step.backward = [](torch::Tensor&) {};
      step.update = [] {};
    } else {
      ctx.optimizer_ = MakeOptimizer(config, *ctx.model_);
      auto* optimizer = ctx.optimizer_.get();
      step.forward = [model](Batch& b) { return torch::nn::functional::cross_entropy(model->forward(b.input), b.target); };
      step.backward = [](torch::Tensor& loss) { loss.backward(); };
      step.update = [optimizer] {
        optimizer->step();
        for (auto& group : optimizer->param_groups())
          for (auto& p : group.params()) p.mutable_grad() = torch::Tensor();  // set_to_none
      };
    }

    // The step, wrapped by the techniques innermost-first.
    std::vector<Active*> by_order;
    for (auto& a : active) by_order.push_back(&a);
    std::stable_sort(by_order.begin(), by_order.end(), [](Active* a, Active* b) {
      return a->technique->wrap_order() < b->technique->wrap_order();
    });
    for (auto* a : by_order) {
      try {
        step = a->technique->wrap_step(std::move(step), ctx);
      } catch (const std::exception& e) {
        throw TechniqueFailure(fmt::format("technique '{}' failed in wrap_step: {}", a->name, e.what()));
      }
    }

    ctx.step_ = &step;

    // Last preparations (auto_batch probes here), then the loader.
    ctx.in_train_begin_ = true;
    ForEach(active, "on_train_begin", [&](Technique& t) { t.on_train_begin(ctx); });
    ctx.EndTrainBegin();
    if (ctx.aborted()) throw TrialAborted();
    std::unique_ptr<HostView> host_view;
    std::unique_ptr<Loader> loader;
    if (data->on_host()) {
      host_view = std::make_unique<HostView>(*data);
      ForEach(active, "make_loader", [&](Technique& t) {
        if (!loader) loader = t.make_loader(*host_view, ctx);
      });
      if (!loader) loader = std::make_unique<HostLoader>(*data, device);
    } else {
      loader = std::make_unique<DeviceLoader>(*data);
    }

    // Steps: warm-up (recorded, flagged) then measured.
    const auto& train = config.value("train", nlohmann::json::object());
    const auto& measure = infer ? config.value("infer", nlohmann::json::object()) : train;
    const int64_t warmup = measure.value("warmup_steps", infer ? 10 : 5);
    int64_t measured = measure.value("steps", infer ? 100 : 50);
    if (!infer && train.contains("epochs"))
      measured = std::max<int64_t>(1, std::llround(train["epochs"].get<double>() * data->batches_per_epoch()));
    const int64_t total = warmup + measured, per_epoch = data->batches_per_epoch();
    const int64_t batch = data->batch_size();
    ctx.metric("batch_size", static_cast<double>(batch));

    StepTimer timer(device);
    std::vector<double> data_ms, latency_ms;  // latency: inference, each pass synchronized
    std::vector<torch::Tensor> losses;
    data_ms.reserve(total);
    losses.reserve(total);
    if (!infer) model->train();
    const bool host_sync_ok = device.is_cpu();
    int64_t done = total;
    for (int64_t i = 0; i < total; ++i) {
      if (i == warmup) {
        Synchronize(device);
        ResetPeakMemory(device);
      }
      if (!infer) timer.Mark();  // inference times each synchronized pass on the host clock instead
      const auto t0 = Clock::now();
      Batch b = loader->next();
      ForEach(active, "on_batch", [&](Technique& t) { t.on_batch(b, ctx); });
      data_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      torch::Tensor loss;
      if (infer) {
        step.forward(b);
        Synchronize(device);  // the output is there: one request's latency
        latency_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      } else {
        loss = step.forward(b);
        step.backward(loss);
        step.update();
        losses.push_back(loss.detach());
      }
      StepStats st{i, i < warmup, infer ? torch::Tensor() : losses.back()};
      ForEach(active, "on_step_end", [&](Technique& t) { t.on_step_end(st, ctx); });
      if ((i + 1) % per_epoch == 0) ForEach(active, "on_epoch_end", [&](Technique& t) { t.on_epoch_end(ctx); });
      if (ctx.aborted()) {
        done = i + 1;
        break;
      }
      if (options.on_step) options.on_step(i + 1, total);
      if (options.on_progress && ((i + 1) % options.progress_every == 0 || i + 1 == total)) {
        // Reading the loss synchronizes: only where that costs nothing (the CPU) or in warm-up.
        const bool read = !infer && (host_sync_ok || i < warmup);
        options.on_progress({i + 1, total, i < warmup, read ? loss.item<double>() : std::nan(""), PeakMemoryBytes(device)});
      }
    }
    if (!infer) timer.Mark();
    const std::vector<double> step_ms = infer ? latency_ms : timer.ElapsedMs();  // synchronizes once
    const auto loss_values = infer ? torch::full({done}, std::nan(""), torch::kDouble)
                                   : torch::stack(losses).to(torch::kCPU, torch::kDouble);
    const auto* lv = loss_values.data_ptr<double>();

    std::vector<double> measured_ms;
    double measured_total = 0;
    int64_t first_bad = -1;
    for (int64_t i = 0; i < done; ++i) {
      store::StepRow r{i < warmup ? "warmup" : "measure", i < warmup ? i : i - warmup, step_ms[i], data_ms[i], batch, lv[i]};
      if (!std::isfinite(lv[i])) r.loss.reset();
      if (!std::isfinite(lv[i]) && first_bad < 0 && !infer) first_bad = i;
      rec.steps.push_back(r);
      if (i >= warmup) {
        measured_ms.push_back(step_ms[i]);
        measured_total += step_ms[i];
      }
    }
    if (!measured_ms.empty()) {
      const auto n = static_cast<int64_t>(measured_ms.size());
      ctx.metric("samples_per_s", static_cast<double>(batch * n) * 1000.0 / measured_total, "samples/s");
      ctx.metric("step_ms_median", Quantile(measured_ms, 0.5), "ms");
      ctx.metric("step_ms_p10", Quantile(measured_ms, 0.1), "ms");
      ctx.metric("step_ms_p90", Quantile(measured_ms, 0.9), "ms");
      ctx.metric("step_ms_p99", Quantile(measured_ms, 0.99), "ms");
      ctx.metric("step_ms_mean", measured_total / static_cast<double>(n), "ms");
      ctx.metric("measured_s", measured_total / 1000.0, "s");
    }
    ctx.metric("peak_mem_bytes", static_cast<double>(PeakMemoryBytes(device)), "bytes");
    if (const int64_t reserved = ReservedMemoryBytes(device); reserved >= 0)
      ctx.metric("reserved_mem_bytes", static_cast<double>(reserved), "bytes");
    if (std::isfinite(lv[done - 1])) ctx.metric("final_loss", lv[done - 1]);
    if (ctx.aborted()) {
      rec.status = ctx.abort_status();
      rec.error = ctx.abort_why();
    } else if (first_bad >= 0) {
      rec.status = "nan";
      rec.error = fmt::format("loss became non-finite at {} step {}", first_bad < warmup ? "warm-up" : "measured",
                              first_bad < warmup ? first_bad : first_bad - warmup);
    } else if (measure.value("eval", true)) {
      const auto plain = [model](Batch& b) { return model->forward(b.input); };
      const double acc = infer ? Accuracy(*model, *data, active, ctx, step.forward)
                               : Accuracy(*model, *data, active, ctx, plain);
      if (!std::isnan(acc)) ctx.metric("accuracy", acc);
    }
    inference_mode.reset();  // on_finish may export (tracing, freezing): outside inference mode
    ForEach(active, "on_finish", [&](Technique& t) { t.on_finish(ctx); });
  } catch (const TrialAborted&) {
    rec.status = ctx.abort_status();
    rec.error = ctx.abort_why();
  } catch (const TechniqueFailure& e) {
    rec.status = Classify(e.what());
    rec.error_detail = e.what();
  } catch (const data::DataError& e) {
    rec.status = "failed";
    rec.error_detail = e.what();
  } catch (const std::bad_alloc&) {
    rec.status = "oom";
    rec.error = "out of host memory (std::bad_alloc)";
  } catch (const std::exception& e) {  // c10::Error and friends: a failed trial, not a crash
    rec.status = Classify(e.what());
    rec.error_detail = e.what();
  }
  // The store keeps the first line as the error and the whole text beside it (a TorchScript
  // failure's first line says only that the interpreter failed; the reason comes after).
  if (!rec.error_detail.empty()) rec.error = FirstLine(rec.error_detail);
  if (rec.error.find('\n') != std::string::npos) {
    rec.error_detail = rec.error;
    rec.error = FirstLine(rec.error);
  }
  for (size_t i = 0; i < notes.size(); ++i) rec.environment[fmt::format("note.{:02}", i)] = notes[i];
  rec.finished_at = UtcNow();
  return rec;
}

}  // namespace runx::engine
