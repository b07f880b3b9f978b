#include "engine/runner.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <SQLiteCpp/SQLiteCpp.h>
#include <torch/cuda.h>

#include "engine/device.h"
#include "engine/environment.h"
#include "engine/child.h"
#include "engine/trial.h"
#include "plugins/loader.h"
#include "runx/compat.h"
#include "report/report.h"
#include "spec/spec.h"
#include "spec/sweep.h"
#include "store/store.h"
#include "version.h"
#ifdef RUNX_WITH_CUDA
#include "engine/cuda_support.h"
#endif

namespace runx::engine {
namespace {

std::vector<spec::Override> Overrides(const std::vector<std::string>& sets) {
  std::vector<spec::Override> out;
  for (const auto& s : sets) out.push_back({s});
  return out;
}

/// Loads, validates and expands `file` (then keeps `shard`); prints every problem and returns
/// nullopt when the input is invalid (exit status 2).
std::optional<spec::Plan> LoadPlan(const std::string& file, const std::vector<std::string>& sets,
                                   const std::optional<std::string>& shard, const spec::SchemaSet& schemas,
                                   spec::Experiment* exp) {
  try {
    *exp = spec::Load(file, Overrides(sets), schemas);
    auto plan = spec::Expand(*exp, schemas);
    return shard ? spec::Shard(plan, *shard) : plan;
  } catch (const spec::SpecError& e) {
    fmt::print(stderr, "{}", e.Render());
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "error: {}\n", e.what());
  }
  return std::nullopt;
}

void PrintPluginErrors(const plugins::Registry& registry) {
  for (const auto& e : registry.errors()) fmt::print(stderr, "warning: {}\n", e);
}


}  // namespace

namespace {

std::atomic<bool> g_interrupted{false};

void OnSignal(int) { g_interrupted = true; }

/// SIGINT/SIGTERM set a flag; the sweep loop ends the running trial and stops cleanly.
struct SignalGuard {
  SignalGuard() {
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  struct sigaction old_int_ {}, old_term_ {};
};

std::string Clock(double s) {
  const auto t = static_cast<int64_t>(s);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}

/// What identifies a trial's result for resume: the variant's config plus everything else the
/// figures depend on (runx and LibTorch versions, the device it resolves to here).
std::string IdentityHash(const std::string& config_hash, const std::string& device) {
  return spec::Sha256Hex(fmt::format("{}|runx {}|libtorch {}|{}", config_hash, Version(),
                                     compat::TorchVersionString(), device));
}

int64_t CountOk(store::Store& store, const std::string& identity) {
  SQLite::Statement q(store.db(), "SELECT count(*) FROM trials WHERE config_hash = ? AND status = 'ok'");
  q.bind(1, identity);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

/// The sweep to continue: the latest one of this experiment, unless --force.
std::optional<int64_t> ResumableSweep(store::Store& store, int64_t experiment_id) {
  SQLite::Statement q(store.db(), "SELECT id FROM sweeps WHERE experiment_id = ? ORDER BY id DESC LIMIT 1");
  q.bind(1, experiment_id);
  if (q.executeStep()) return q.getColumn(0).getInt64();
  return std::nullopt;
}

/// A trial decided without starting a process (unavailable device, incompatible technique).
std::optional<store::TrialRecord> PreCheck(const nlohmann::json& config, const plugins::Registry& registry,
                                           std::string* device_out) {
  store::TrialRecord r;
  r.config_json = config.dump();
  r.started_at = UtcNow();
  try {
    const auto device = SelectDevice(config.value("device", "auto"));
    *device_out = device.str();
    r.device = *device_out;
    const auto techniques = EffectiveTechniques(config);
    for (const auto& [name, params] : techniques.items()) {
      auto verdict = registry.Create(name, params)->check(config, device);
      if (!verdict.ok) {
        r.status = "incompatible";
        r.error = fmt::format("{}: {}", name, verdict.reason);
        break;
      }
    }
  } catch (const std::exception& e) {
    r.status = "failed";
    r.error = e.what();
  }
  if (r.status.empty()) return std::nullopt;
  r.finished_at = UtcNow();
  return r;
}

class SweepProgress {
 public:
  SweepProgress(const RunOptions& o, size_t total) : quiet_(o.quiet), json_(o.json), tty_(isatty(fileno(stderr))), total_(total) {}
  void Event(nlohmann::json ev) {
    if (json_) fmt::print("{}\n", ev.dump()), std::fflush(stdout);
  }
  void TrialStart(size_t i, const spec::PlannedTrial& t) {
    index_ = i;
    label_ = t.label;
    Event({{"event", "trial_start"}, {"index", i + 1}, {"total", total_}, {"label", t.label}, {"repeat", t.repeat_index}});
    if (!quiet_ && !json_ && !tty_) fmt::print(stderr, "[{}/{}] {} (repeat {}) started\n", i + 1, total_, t.label, t.repeat_index);
  }
  void Step(const nlohmann::json& ev) {
    nlohmann::json e = ev;
    e["index"] = index_ + 1;
    Event(e);
    if (quiet_ || json_) return;
    const double elapsed = Seconds();
    const std::string loss = ev.contains("loss") ? fmt::format("  loss {:.4f}", ev["loss"].get<double>()) : "";
    const std::string eta = done_ > 0 ? fmt::format("  ETA {}", Clock(elapsed / done_ * (total_ - done_))) : "";
    const std::string line = fmt::format("[{}/{}] {}  {} {}/{}{}  |  elapsed {}{}", index_ + 1, total_, label_,
                                         ev.value("warmup", false) ? "warm-up" : "step", ev.value("step", 0),
                                         ev.value("total", 0), loss, Clock(elapsed), eta);
    if (tty_) {
      fmt::print(stderr, "\r\033[K{}", line);
    } else if (Seconds() - last_line_ > 10) {
      last_line_ = Seconds();
      fmt::print(stderr, "{}\n", line);
    }
  }
  void TrialEnd(const store::TrialRecord& r, const std::string& note) {
    ++done_;
    Event({{"event", "trial_end"}, {"index", index_ + 1}, {"label", label_}, {"status", r.status}, {"error", r.error}, {"note", note}});
    if (quiet_ || json_) return;
    if (tty_) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "[{}/{}] {}: {}{}\n", index_ + 1, total_, label_, r.status.empty() ? note : r.status,
               r.error.empty() ? "" : " (" + r.error + ")");
  }
  double Seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  bool quiet_, json_, tty_;
  size_t total_, index_ = 0, done_ = 0;
  std::string label_;
  double last_line_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

int RunExperiment(const RunOptions& options) {
  const auto dirs = plugins::PluginDirs();
  const auto registry = plugins::Registry::Discover(dirs);
  PrintPluginErrors(registry);
  const auto schemas = spec::SchemaSet::Load(dirs);
  spec::Experiment exp;
  auto loaded = LoadPlan(options.file, options.overrides, options.shard, schemas, &exp);
  if (!loaded) return 2;
  const spec::Plan& plan = *loaded;
  const std::string db = options.db.value_or(exp.config.value("results", "results/runx.db"));
  const std::string name = exp.config.at("name").get<std::string>();
  // Trials' files (exported models) go beside the results store unless RUNX_ARTIFACT_DIR says
  // otherwise; the children inherit the variable.
  if (!std::getenv("RUNX_ARTIFACT_DIR")) {
    const auto parent = std::filesystem::path(db).parent_path();
    setenv("RUNX_ARTIFACT_DIR", (parent.empty() ? std::filesystem::path("artifacts") : parent / "artifacts").c_str(), 1);
  }
  try {
    auto store = store::Store::Open(db);
    const auto host = HostEnvironment();
    const int64_t experiment_id = store.AddExperiment(name, options.file, exp.text, exp.text_sha256);
    std::optional<int64_t> resumed = options.force ? std::nullopt : ResumableSweep(store, experiment_id);
    int64_t sweep_id;
    if (resumed) {
      sweep_id = *resumed;
      SQLite::Statement q(store.db(), "UPDATE sweeps SET status = 'running', finished_at = NULL WHERE id = ?");
      q.bind(1, sweep_id);
      q.exec();
    } else {
      sweep_id = store.BeginSweep({experiment_id, UtcNow(), host.count("host") ? host.at("host") : "", Version(),
                                   GitSha(), options.command_line});
      auto env = host;
      env["plan.mode"] = plan.mode;
      env["plan.order"] = plan.order;
      env["plan.order_seed"] = std::to_string(plan.order_seed);
      env["plan.variants"] = std::to_string(plan.variants);
      env["plan.repeats"] = std::to_string(plan.repeats);
      env["plan.shard"] = fmt::format("{}/{}", plan.shard_index, plan.shard_count);
      store.AddSweepEnvironment(sweep_id, env);
    }

    SweepProgress progress(options, plan.trials.size());
    progress.Event({{"event", "sweep_start"}, {"sweep_id", sweep_id}, {"trials", plan.trials.size()},
                    {"variants", plan.variants}, {"repeats", plan.repeats}, {"resumed", resumed.has_value()}});
    if (!options.quiet && !options.json)
      fmt::print(stderr, "runx: {} ({}): {} trial{} ({} variant{} x {} repeat{}){}\n", name, options.file,
                 plan.trials.size(), plan.trials.size() == 1 ? "" : "s", plan.variants, plan.variants == 1 ? "" : "s",
                 plan.repeats, plan.repeats == 1 ? "" : "s", resumed ? fmt::format(", resuming sweep {}", sweep_id) : "");

    SignalGuard signals;
    g_interrupted = false;
    std::map<std::string, int64_t> seen;  // identity -> planned repeats met so far
    int not_ok = 0, ran = 0, skipped = 0;
    size_t done = 0;
    for (size_t i = 0; i < plan.trials.size() && !g_interrupted; ++i) {
      const auto& t = plan.trials[i];
      progress.TrialStart(i, t);
      std::string device;
      auto decided = PreCheck(t.config, registry, &device);
      const std::string identity = IdentityHash(t.config_hash, device.empty() ? t.config.value("device", "auto") : device);
      const int64_t nth = seen[identity]++;
      if (!options.force && !decided && nth < CountOk(store, identity)) {
        ++skipped;
        ++done;
        store::TrialRecord r;
        progress.TrialEnd(r, "skipped (an ok result with the same config, versions and device is in the store; --force re-runs it)");
        continue;
      }
      store::TrialRecord rec;
      if (decided) {
        rec = *decided;
      } else if (options.in_process) {
        rec = RunTrial(t.config, registry, {});
      } else {
        ChildOptions copts;
        copts.runx_exe = SelfExe();
        copts.timeout_s = plan.trial_timeout_s;
        copts.interrupted = &g_interrupted;
        copts.on_event = [&progress](const nlohmann::json& ev) { progress.Step(ev); };
        try {
          if (RunTrialInChild(t.config, copts, &rec) == ChildOutcome::kInterrupted) break;
        } catch (const std::exception& e) {  // runx's side failed (fork, temp files, a bad record)
          rec = store::TrialRecord{};
          rec.status = "failed";
          rec.error = fmt::format("runx could not run or read the trial: {}", e.what());
          rec.started_at = rec.finished_at = UtcNow();
        }
        ++ran;
      }
      rec.sweep_id = sweep_id;
      rec.config_hash = identity;
      rec.label = t.label;
      rec.is_baseline = t.is_baseline;
      rec.repeat_index = t.repeat_index;
      rec.order_index = t.order_index;
      if (rec.device.empty()) rec.device = device;
      if (rec.config_json.empty()) rec.config_json = t.config.dump();
      store.RecordTrial(rec);
      if (rec.status != "ok") ++not_ok;
      ++done;
      progress.TrialEnd(rec, "");
    }
    const bool interrupted = g_interrupted.load();
    store.EndSweep(sweep_id, interrupted ? "interrupted" : "ok", UtcNow());
    const auto rows = report::Summarize(db, sweep_id, plan.order_seed);
    report::WriteVariantStats(store, sweep_id, rows);
    progress.Event({{"event", "sweep_end"}, {"sweep_id", sweep_id}, {"interrupted", interrupted}, {"done", done},
                    {"skipped", skipped}, {"not_ok", not_ok}});
    if (!options.quiet && !options.json) {
      fmt::print("{}", report::RenderReport(rows));
      fmt::print("results: {} (sweep {}){}\n", db, sweep_id,
                 skipped ? fmt::format("; {} trial{} skipped as already done", skipped, skipped == 1 ? "" : "s") : "");
    }
    if (interrupted) {
      fmt::print(stderr, "runx: interrupted: {} of {} trials done; run the same command again to resume\n", done,
                 plan.trials.size());
      return 130;
    }
    return options.strict && not_ok > 0 ? 1 : 0;
  } catch (const store::StoreError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}

int PlanExperiment(const std::string& file, const std::vector<std::string>& overrides,
                   const std::optional<std::string>& shard) {
  spec::Experiment exp;
  const auto plan = LoadPlan(file, overrides, shard, spec::SchemaSet::Load(plugins::PluginDirs()), &exp);
  if (!plan) return 2;
  fmt::print("{}", spec::RenderPlan(*plan));
  return 0;
}

int ValidateFiles(const std::vector<std::string>& files, const std::vector<std::string>& overrides) {
  const auto schemas = spec::SchemaSet::Load(plugins::PluginDirs());
  int errors = 0;
  for (const auto& f : files) {
    const auto diags = spec::Validate(f, Overrides(overrides), schemas);
    for (const auto& d : diags) fmt::print(stderr, "{}", d.Render());
    errors += static_cast<int>(diags.size());
    if (diags.empty()) fmt::print("{}: ok\n", f);
  }
  if (errors > 0) {
    fmt::print(stderr, "{} error{} in {} file{}\n", errors, errors == 1 ? "" : "s", files.size(),
               files.size() == 1 ? "" : "s");
    return 2;
  }
  return 0;
}

int Doctor() {
  const auto row = [](const std::string& k, const std::string& v) { fmt::print("{:<22}{}\n", k, v); };
  const auto env = HostEnvironment();
  row("runx", fmt::format("{} (git {})", Version(), GitSha()));
  row("LibTorch", compat::TorchVersionString());
  row("OS", env.at("os"));
  row("CPU", fmt::format("{} ({} logical cores)", env.at("cpu"), env.at("cpu_count")));
  row("threads", fmt::format("intra-op {}, inter-op {}", at::get_num_threads(), at::get_num_interop_threads()));
#ifdef __APPLE__
  row("MPS", compat::MpsAvailable() ? "built and available"
                                    : "not available (needs LibTorch's macOS arm64 build, macOS 12.3+ on Apple silicon)");
#else
  row("MPS", "not built (MPS exists only in LibTorch's macOS arm64 build)");
#endif
  const bool cuda = torch::cuda::is_available();
#ifdef RUNX_WITH_CUDA
  row("CUDA", cuda ? fmt::format("available, runtime {}, {} device(s)", env.at("cuda_runtime_version"),
                                 torch::cuda::device_count())
                   : "built, but no CUDA device is visible");
  for (int i = 0; cuda && i < static_cast<int>(torch::cuda::device_count()); ++i)
    row(fmt::format("  cuda:{}", i), cuda::DeviceSummary(i));
#else
  row("CUDA", "not built (this LibTorch is CPU-only; point CMAKE_PREFIX_PATH at a CUDA LibTorch)");
#endif
  row("cuDNN", env.at("cudnn_version"));
  std::string autodev;
  try {
    autodev = SelectDevice("auto").str();
  } catch (const DeviceError& e) {
    autodev = e.what();
  }
  row("device: auto", autodev);
  std::vector<std::string> amp;
  const auto devices = AvailableDevices();
  const auto usable = [&](c10::DeviceType d) {
    const std::string name = d == c10::DeviceType::CUDA ? "cuda:0" : d == c10::DeviceType::MPS ? "mps" : "cpu";
    return std::find(devices.begin(), devices.end(), name) != devices.end();
  };
  for (auto dev : {c10::DeviceType::CPU, c10::DeviceType::CUDA, c10::DeviceType::MPS})
    for (auto dt : {c10::kBFloat16, c10::kHalf})
      if (usable(dev) && compat::AutocastSupported(dev, dt, nullptr))
        amp.push_back(fmt::format("{}/{}", c10::DeviceTypeName(dev, true), dt == c10::kHalf ? "fp16" : "bf16"));
  row("autocast here", fmt::format("{}", fmt::join(amp, ", ")));
  const auto dirs = plugins::PluginDirs();
  const auto registry = plugins::Registry::Discover(dirs);
  row("plugins", fmt::format("{} found in {}", registry.plugins().size(), fmt::join(dirs, ":")));
  PrintPluginErrors(registry);
  return 0;
}

int ListPlugins() {
  const auto dirs = plugins::PluginDirs();
  const auto registry = plugins::Registry::Discover(dirs);
  fmt::print("{:<18}{:<10}{:<6}{:<10}{}\n", "name", "version", "api", "libtorch", "description");
  for (const auto& [name, p] : registry.plugins())
    fmt::print("{:<18}{:<10}{:<6}{:<10}{}\n", name, p.descriptor->version, fmt::format("v{}", p.descriptor->api_version),
               fmt::format("{}.{}", p.descriptor->torch_version / 100, p.descriptor->torch_version % 100),
               p.descriptor->description);
  fmt::print("searched: {}\n", fmt::join(dirs, ":"));
  PrintPluginErrors(registry);
  return registry.errors().empty() ? 0 : 1;
}

}  // namespace runx::engine
