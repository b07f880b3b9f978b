#include "report/compare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace runx::report {
namespace {

// The trials of one variant of a side, and the key it is matched on.
struct SideVariant {
  std::string key;    ///< "config:<hash>", or "label:<label>" without a config identity
  std::string label;  ///< the label of its first trial
  std::vector<const store::RunTrial*> trials;
};

std::string KeyOf(const store::RunTrial& t) {
  return t.config_hash.empty() ? "label:" + t.label : "config:" + t.config_hash;
}

// The variants of a side in first-trial order; only `label`'s trials when the side names one.
std::vector<SideVariant> Variants(const CompareSide& side) {
  std::vector<SideVariant> out;
  for (const store::RunTrial& t : side.trials) {
    if (side.label && t.label != *side.label) continue;
    const std::string key = side.label ? "label:" + t.label : KeyOf(t);
    auto it = std::find_if(out.begin(), out.end(), [&](const SideVariant& v) { return v.key == key; });
    if (it == out.end()) {
      out.push_back({key, t.label, {}});
      it = out.end() - 1;
    }
    it->trials.push_back(&t);
  }
  return out;
}

int OkCount(const SideVariant& v) {
  return static_cast<int>(std::count_if(v.trials.begin(), v.trials.end(),
                                        [](const store::RunTrial* t) { return t->status == TrialStatus::kOk; }));
}

std::optional<double> MedianStepMs(const std::vector<Repeat>& repeats) {
  std::vector<double> ms;
  for (const Repeat& r : repeats) {
    for (const StepSample& s : r) ms.push_back(s.wall_ms);
  }
  if (ms.empty()) return std::nullopt;
  return Median(std::move(ms));
}

ComparedVariant CompareOne(const SideVariant& a, const SideVariant& b, const CompareOptions& options,
                           const SpreadBook& spreads) {
  ComparedVariant c;
  c.label_a = a.label;
  c.label_b = b.label;
  c.ok_a = OkCount(a);
  c.trials_a = static_cast<int>(a.trials.size());
  c.ok_b = OkCount(b);
  c.trials_b = static_cast<int>(b.trials.size());
  const std::vector<Repeat> ra = RepeatsOf(Processes(a.trials));
  const std::vector<Repeat> rb = RepeatsOf(Processes(b.trials));
  c.noise_a = CheckNoise(ra, options.limits);
  c.noise_b = CheckNoise(rb, options.limits);
  c.joules_per_sample_a = MedianOfOk(a.trials, &store::RunTrial::joules_per_sample);
  c.joules_per_sample_b = MedianOfOk(b.trials, &store::RunTrial::joules_per_sample);
  c.power_w_a = MedianOfOk(a.trials, &store::RunTrial::power_w);
  c.power_w_b = MedianOfOk(b.trials, &store::RunTrial::power_w);
  if (!ra.empty()) {
    c.samples_per_s_a = Throughput(ra);
    c.step_ms_a = MedianStepMs(ra);
  }
  if (!rb.empty()) {
    c.samples_per_s_b = Throughput(rb);
    c.step_ms_b = MedianStepMs(rb);
  }
  if (ra.empty() || rb.empty() || !(*c.samples_per_s_a > 0)) {
    c.note = ra.empty() && rb.empty() ? "no ok trial in A or B" : ra.empty() ? "no ok trial in A" : "no ok trial in B";
    if (!ra.empty() && !(*c.samples_per_s_a > 0)) c.note = "A processed no samples";
    return c;
  }
  c.ratio = JudgeRatio(a.trials, b.trials, spreads, options.threshold);
  return c;
}

std::string Percent(double threshold) { return fmt::format("{:g}%", threshold * 100); }

std::string Signed(double ratio) { return fmt::format("{:+.1f}%", (ratio - 1) * 100); }

std::string Short(const std::string& hash, size_t n = 12) { return hash.substr(0, n); }

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  return v.empty() ? "-" : fmt::format("{}", fmt::join(v, sep));
}

std::string VerdictWord(const ComparedVariant& v) { return v.ratio ? ChangeName(v.ratio->change) : ""; }

std::string Notes(const ComparedVariant& v) {
  std::vector<std::string> notes;
  if (!v.note.empty()) notes.push_back(v.note);
  if (v.ratio && !v.ratio->caution.empty()) notes.emplace_back("busy machine");
  if (v.noise_a.unstable()) notes.emplace_back("A unstable");
  if (v.noise_b.unstable()) notes.emplace_back("B unstable");
  return fmt::format("{}", fmt::join(notes, "; "));
}

std::string Samples(const std::optional<double>& v) { return v ? fmt::format("{:.1f}", *v) : "-"; }

// The lines after the table: variants in one run only, why verdicts are inconclusive or
// cautioned, noise, and the gate's verdict.
std::vector<std::string> Remarks(const Comparison& c, Gate gate) {
  std::vector<std::string> out;
  if (!c.only_in_a.empty()) out.push_back(fmt::format("only in A: {}", Join(c.only_in_a)));
  if (!c.only_in_b.empty()) out.push_back(fmt::format("only in B: {}", Join(c.only_in_b)));
  for (const ComparedVariant& v : c.variants) {
    if (v.ratio && v.ratio->change == Change::kInconclusive) {
      std::string line = fmt::format("inconclusive: {}: {}", v.label(), v.ratio->why);
      if (v.ratio->repeats_needed) {
        line += fmt::format("; ~{} repeats per run (now {}) would resolve ±{}", *v.ratio->repeats_needed,
                            std::min(v.ratio->processes_a, v.ratio->processes_b), Percent(c.threshold));
      }
      out.push_back(line);
    }
    if (v.ratio && !v.ratio->caution.empty()) out.push_back(fmt::format("{}: {}", v.label(), v.ratio->caution));
    for (const auto& [side, noise] : {std::pair{"A", &v.noise_a}, std::pair{"B", &v.noise_b}}) {
      if (!noise->unstable()) continue;
      out.push_back(fmt::format("noise: {} ({}): {}", side[0] == 'A' ? v.label_a : v.label_b, side,
                                fmt::join(noise->reasons, "; ")));
    }
  }
  if (gate != Gate::kOff) {
    const std::vector<std::string> failed = c.GateFailures(gate);
    const std::string what = gate == Gate::kRegressions
                                 ? fmt::format("slower beyond {}", Percent(c.threshold))
                                 : fmt::format("slower beyond {} or inconclusive", Percent(c.threshold));
    if (failed.empty()) {
      out.push_back(fmt::format("regression gate: passed (no variant {})", what));
    } else {
      out.push_back(fmt::format("regression gate: failed: {} {}: {}", failed.size(), what, Join(failed)));
    }
  }
  return out;
}

// Hints for a comparison that cannot answer what was asked: a run against itself, or runs whose
// --set overrides leave no configuration in common.
std::vector<std::string> Hints(const Comparison& c, const store::RunOverview& a, const store::RunOverview& b) {
  std::vector<std::string> out;
  if (a.id == b.id) {
    out.push_back(
        fmt::format("A and B are both run {}: a run compared with itself measures nothing; name two runs, or "
                    "two variants of it (e.g. {}:baseline {}:<label>)",
                    a.id, a.id, a.id));
  } else if (c.variants.empty() && (a.overrides_json != "[]" || b.overrides_json != "[]")) {
    const std::string label_a = c.only_in_a.empty() ? "baseline" : c.only_in_a.front();
    const std::string label_b = c.only_in_b.empty() ? label_a : c.only_in_b.front();
    out.push_back(
        fmt::format("the runs' --set values differ (A: {}, B: {}), so no configuration is in both; to put two "
                    "variants side by side anyway: runx compare {}:{} {}:{}",
                    a.overrides_json, b.overrides_json, a.id, label_a, b.id, label_b));
  }
  return out;
}

nlohmann::ordered_json RunJson(const store::RunOverview& r) {
  return {{"run_id", r.id},
          {"runs", r.runs},
          {"experiment", r.experiment},
          {"tag", r.tag},
          {"note", r.note},
          {"user_git_sha", r.user_git_sha},
          {"user_git_dirty",
           r.user_git_dirty ? nlohmann::ordered_json(*r.user_git_dirty) : nlohmann::ordered_json(nullptr)},
          {"measured", r.measured},
          {"git_sha", r.git_sha},
          {"git_dirty", r.git_dirty ? nlohmann::ordered_json(*r.git_dirty) : nlohmann::ordered_json(nullptr)},
          {"runx_build", r.runx_build},
          {"started_at", r.started_at},
          {"host", r.host},
          {"devices", r.devices},
          {"status", r.status}};
}

}  // namespace

std::string BuildName(const store::RunOverview& r) {
  std::string sha = r.git_sha.empty() ? "unknown" : r.git_sha.substr(0, 7);
  if (r.git_dirty.value_or(false)) sha += "-dirty";
  return sha;
}

std::string UserCommitName(const store::RunOverview& r) {
  if (r.user_git_sha.empty()) return "-";
  return r.user_git_sha.substr(0, 7) + (r.user_git_dirty.value_or(false) ? "-dirty" : "");
}

std::string RunName(const store::RunOverview& r) {
  return r.runs.size() > 1 ? fmt::format("{} ({} runs)", r.id, r.runs.size()) : std::to_string(r.id);
}

std::string ShortDate(const std::string& iso) {
  return iso.size() < 16 ? iso : iso.substr(0, 10) + " " + iso.substr(11, 5);
}

std::vector<std::string> Comparison::Regressions() const {
  std::vector<std::string> out;
  for (const ComparedVariant& v : variants) {
    if (v.ratio && v.ratio->change == Change::kSlower) out.push_back(v.label());
  }
  return out;
}

std::vector<std::string> Comparison::Inconclusive() const {
  std::vector<std::string> out;
  for (const ComparedVariant& v : variants) {
    if (v.ratio && v.ratio->change == Change::kInconclusive) out.push_back(v.label());
  }
  return out;
}

std::vector<std::string> Comparison::GateFailures(Gate gate) const {
  std::vector<std::string> out;
  for (const ComparedVariant& v : variants) {
    const bool slower = v.ratio && v.ratio->change == Change::kSlower;
    const bool undecided = !v.ratio || v.ratio->change == Change::kInconclusive;
    if ((gate != Gate::kOff && slower) || (gate == Gate::kRegressionsOrInconclusive && undecided)) {
      out.push_back(v.label());
    }
  }
  return out;
}

Comparison Compare(const CompareSide& a, const CompareSide& b, const CompareOptions& options,
                   const SpreadBook& spreads) {
  Comparison c;
  c.threshold = options.threshold;
  const std::vector<SideVariant> va = Variants(a);
  const std::vector<SideVariant> vb = Variants(b);
  for (const auto& [side, variants] : {std::pair{&a, &va}, std::pair{&b, &vb}}) {
    if (side->label && variants->empty()) {
      throw store::StoreError(fmt::format("run {} has no variant '{}'", side->run_id, *side->label));
    }
  }
  if (a.label || b.label) {
    if (!va.empty() && !vb.empty()) c.variants.push_back(CompareOne(va.front(), vb.front(), options, spreads));
    return c;
  }
  std::set<std::string> in_a;
  for (const SideVariant& v : va) {
    in_a.insert(v.key);
    const auto match = std::find_if(vb.begin(), vb.end(), [&](const SideVariant& w) { return w.key == v.key; });
    if (match == vb.end()) {
      c.only_in_a.push_back(v.label);
    } else {
      c.variants.push_back(CompareOne(v, *match, options, spreads));
    }
  }
  for (const SideVariant& w : vb) {
    if (!in_a.count(w.key)) c.only_in_b.push_back(w.label);
  }
  return c;
}

std::string DescribeRun(const store::RunOverview& r) {
  std::string name = fmt::format("run {}", r.id);
  if (r.runs.size() > 1) name += fmt::format(" (a sweep of {} runs: {})", r.runs.size(), fmt::join(r.runs, ", "));
  if (!r.tag.empty()) name += fmt::format(" '{}'", r.tag);
  name += " of " + r.experiment;
  if (!r.user_git_sha.empty()) name += " at commit " + UserCommitName(r);
  std::string out =
      fmt::format("{}: runx {}{}, {}, {}, {}, {}", name, BuildName(r), r.build_type.empty() ? "" : " " + r.build_type,
                  ShortDate(r.started_at), r.host, Join(r.devices), r.status);
  if (!r.measured) out += " (measured nothing: every trial reused)";
  if (!r.note.empty()) out += fmt::format("; note: {}", r.note);
  return out;
}

std::vector<std::string> EnvironmentDifferences(const store::RunOverview& a, const store::RunOverview& b) {
  std::vector<std::string> out;
  if (a.runx_build != b.runx_build) {
    out.push_back(fmt::format("runx build: {} (git {}) vs {} (git {})", Short(a.runx_build), BuildName(a),
                              Short(b.runx_build), BuildName(b)));
  }
  if (a.platforms != b.platforms) {
    std::vector<std::string> pa, pb;
    for (const auto& p : a.platforms) pa.push_back(Short(p));
    for (const auto& p : b.platforms) pb.push_back(Short(p));
    out.push_back(fmt::format("platform (LibTorch, CUDA, cuDNN, device): {} vs {}", Join(pa), Join(pb)));
  }
  if (a.user_git_sha != b.user_git_sha || a.user_git_dirty != b.user_git_dirty) {
    out.push_back(fmt::format("your commit: {} vs {}", UserCommitName(a), UserCommitName(b)));
  }
  if (a.host != b.host) out.push_back(fmt::format("host: {} vs {}", a.host, b.host));
  if (a.devices != b.devices) out.push_back(fmt::format("devices: {} vs {}", Join(a.devices), Join(b.devices)));
  std::set<std::string> keys;
  for (const auto& [k, v] : a.environment) keys.insert(k);
  for (const auto& [k, v] : b.environment) keys.insert(k);
  static const std::set<std::string> kShown = {"libtorch_version", "cuda_runtime_version", "cudnn_version", "cpu", "os",
                                               "intra_op_threads", "inter_op_threads"};
  for (const std::string& k : keys) {
    if (!kShown.count(k) && k.rfind("noise.", 0) != 0) continue;
    const auto ia = a.environment.find(k);
    const auto ib = b.environment.find(k);
    const std::string va = ia == a.environment.end() ? "-" : ia->second;
    const std::string vb = ib == b.environment.end() ? "-" : ib->second;
    // The load, clocks and temperature at the start differ from run to run.
    if (k == "noise.load_average" || (k.size() > 9 && k.compare(k.size() - 9, 9, "_at_start") == 0)) continue;
    if (va != vb) out.push_back(fmt::format("{}: {} vs {}", k, va, vb));
  }
  return out;
}

TextTable CompareTextTable(const Comparison& c) {
  TextTable t;
  t.headers = {"variant", "A samples/s", "B samples/s", "B/A (95% CI)", "change (95% CI)", "verdict", ""};
  t.right = {false, true, true, false, false, false, false};
  for (const ComparedVariant& v : c.variants) {
    std::string ratio = "-", change = "-", verdict = "-";
    if (v.ratio) {
      const Ratio& r = *v.ratio;
      if (r.interval) {
        ratio = fmt::format("{:.3f} ({:.3f}-{:.3f})", r.estimate, r.interval->low, r.interval->high);
        change = fmt::format("{} ({} to {})", Signed(r.estimate), Signed(r.interval->low), Signed(r.interval->high));
      } else {
        ratio = fmt::format("{:.3f} (no interval)", r.estimate);
        change = Signed(r.estimate);
      }
      verdict = r.change == Change::kInconclusive ? "inconclusive" : VerdictText(r, c.threshold);
    }
    t.rows.push_back(
        {v.label(), Samples(v.samples_per_s_a), Samples(v.samples_per_s_b), ratio, change, verdict, Notes(v)});
  }
  const bool metered = std::any_of(c.variants.begin(), c.variants.end(), [](const ComparedVariant& v) {
    return v.joules_per_sample_a.has_value() || v.joules_per_sample_b.has_value();
  });
  if (metered) {  // energy beside the speedup: joules per sample of each side
    const auto energy = [](const std::optional<double>& j) { return j ? FormatEnergy(*j) : std::string("-"); };
    t.headers.insert(t.headers.begin() + 3, {"A J/sample", "B J/sample"});
    t.right.insert(t.right.begin() + 3, {true, true});
    for (size_t i = 0; i < c.variants.size(); ++i)
      t.rows[i].insert(t.rows[i].begin() + 3,
                       {energy(c.variants[i].joules_per_sample_a), energy(c.variants[i].joules_per_sample_b)});
  }
  return t;
}

DataTable CompareDataTable(const Comparison& c) {
  DataTable t;
  t.columns = {"label_a",
               "label_b",
               "samples_per_s_a",
               "samples_per_s_b",
               "step_ms_a",
               "step_ms_b",
               "ratio",
               "ratio_ci_low",
               "ratio_ci_high",
               "change_pct",
               "verdict",
               "within_threshold",
               "why",
               "caution",
               "processes_a",
               "processes_b",
               "ratio_se",
               "ratio_df",
               "other_cpus_a",
               "other_cpus_b",
               "unstable_a",
               "unstable_b",
               "repeats_needed",
               "noise",
               "note",
               "joules_per_sample_a",
               "joules_per_sample_b",
               "power_w_a",
               "power_w_b"};
  for (const ComparedVariant& v : c.variants) {
    store::Value ratio, low, high, pct, verdict, within, why, caution, pa, pb, spread, df, load_a, load_b, needed;
    if (v.ratio) {
      const Ratio& r = *v.ratio;
      ratio = r.estimate;
      if (r.interval) {
        low = r.interval->low;
        high = r.interval->high;
      }
      pct = (r.estimate - 1) * 100;
      verdict = VerdictWord(v);
      within = int64_t{r.change == Change::kNoChange ? 1 : 0};
      why = r.why;
      caution = r.caution;
      pa = int64_t{r.processes_a};
      pb = int64_t{r.processes_b};
      if (r.error.known()) {
        spread = r.error.se;
        df = int64_t{r.error.df};
      }
      load_a = NumberOrNull(r.load_a.other_cpus);
      load_b = NumberOrNull(r.load_b.other_cpus);
      if (r.repeats_needed) needed = int64_t{*r.repeats_needed};
    }
    std::vector<std::string> noise;
    for (const auto& r : v.noise_a.reasons) noise.push_back("A: " + r);
    for (const auto& r : v.noise_b.reasons) noise.push_back("B: " + r);
    t.rows.push_back({v.label_a,
                      v.label_b,
                      NumberOrNull(v.samples_per_s_a),
                      NumberOrNull(v.samples_per_s_b),
                      NumberOrNull(v.step_ms_a),
                      NumberOrNull(v.step_ms_b),
                      ratio,
                      low,
                      high,
                      pct,
                      verdict,
                      within,
                      why,
                      caution,
                      pa,
                      pb,
                      spread,
                      df,
                      load_a,
                      load_b,
                      int64_t{v.noise_a.unstable() ? 1 : 0},
                      int64_t{v.noise_b.unstable() ? 1 : 0},
                      needed,
                      fmt::format("{}", fmt::join(noise, "; ")),
                      v.note,
                      NumberOrNull(v.joules_per_sample_a),
                      NumberOrNull(v.joules_per_sample_b),
                      NumberOrNull(v.power_w_a),
                      NumberOrNull(v.power_w_b)});
  }
  return t;
}

std::vector<std::string> CompareRemarks(const Comparison& c, const store::RunOverview& a, const store::RunOverview& b,
                                        Gate gate) {
  std::vector<std::string> remarks = Hints(c, a, b);
  for (std::string& r : Remarks(c, gate)) remarks.push_back(std::move(r));
  return remarks;
}

std::string RenderComparison(const Comparison& c, const store::RunOverview& a, const store::RunOverview& b,
                             OutputFormat format, Gate gate) {
  const std::vector<std::string> env = EnvironmentDifferences(a, b);
  const std::vector<std::string> remarks = CompareRemarks(c, a, b, gate);
  if (format == OutputFormat::kCsv) return RenderCsv(CompareDataTable(c));
  if (format == OutputFormat::kJson) {
    nlohmann::ordered_json doc = {{"a", RunJson(a)},
                                  {"b", RunJson(b)},
                                  {"threshold", c.threshold},
                                  {"environment_differences", env},
                                  {"variants", ToJson(CompareDataTable(c))},
                                  {"only_in_a", c.only_in_a},
                                  {"only_in_b", c.only_in_b},
                                  {"regressions", c.Regressions()},
                                  {"inconclusive", c.Inconclusive()},
                                  {"gate_failures", c.GateFailures(gate)},
                                  {"remarks", remarks}};
    return doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  }
  const bool md = format == OutputFormat::kMarkdown;
  std::string out;
  const auto line = [&](const std::string& text) { out += (md ? "- " : "") + text + "\n"; };
  line("A: " + DescribeRun(a));
  line("B: " + DescribeRun(b));
  if (env.empty()) {
    line("environment: same runx build and platform");
  } else {
    line("environment differs: " + Join(env, "; "));
  }
  line(
      fmt::format("B/A is the throughput ratio (samples/s); threshold ±{}; 95% intervals from repeats and earlier "
                  "runs on this host",
                  Percent(c.threshold)));
  out += "\n";
  const TextTable table = CompareTextTable(c);
  if (table.rows.empty()) {
    out += "no variant with the same configuration in both runs\n";
  } else {
    out += md ? RenderMarkdown(table) : RenderText(table);
  }
  if (!remarks.empty()) {
    out += "\n";
    for (const std::string& r : remarks) line(r);
  }
  return out;
}

}  // namespace runx::report
