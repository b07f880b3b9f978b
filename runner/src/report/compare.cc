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

std::string KeyOf(const store::RunTrial& t, const CompareSide& side) {
  const auto it = side.identities.find(t.trial_id);
  const std::string hash = it == side.identities.end() ? "" : it->second.config_hash;
  return hash.empty() ? "label:" + t.label : "config:" + hash;
}

// The variants of a side in first-trial order; only `label`'s trials when the side names one.
std::vector<SideVariant> Variants(const CompareSide& side) {
  std::vector<SideVariant> out;
  for (const store::RunTrial& t : side.trials) {
    if (side.label && t.label != *side.label) continue;
    const std::string key = side.label ? "label:" + t.label : KeyOf(t, side);
    auto it = std::find_if(out.begin(), out.end(), [&](const SideVariant& v) { return v.key == key; });
    if (it == out.end()) {
      out.push_back({key, t.label, {}});
      it = out.end() - 1;
    }
    it->trials.push_back(&t);
  }
  return out;
}

// The ok trials' measured steps, one repeat per trial, in repeat order (as the report takes them).
std::vector<Repeat> OkRepeats(const SideVariant& v) {
  std::vector<const store::RunTrial*> ok;
  for (const store::RunTrial* t : v.trials) {
    if (t->status == TrialStatus::kOk && !t->measured_steps.empty()) ok.push_back(t);
  }
  std::stable_sort(ok.begin(), ok.end(), [](const store::RunTrial* a, const store::RunTrial* b) {
    return std::tie(a->repeat_index, a->trial_id) < std::tie(b->repeat_index, b->trial_id);
  });
  std::vector<Repeat> repeats;
  for (const store::RunTrial* t : ok) {
    Repeat r;
    for (const auto& [wall_ms, samples] : t->measured_steps) r.push_back({wall_ms, samples});
    repeats.push_back(std::move(r));
  }
  return repeats;
}

int OkCount(const SideVariant& v) {
  return static_cast<int>(
      std::count_if(v.trials.begin(), v.trials.end(), [](const store::RunTrial* t) { return t->status == TrialStatus::kOk; }));
}

std::optional<double> MedianStepMs(const std::vector<Repeat>& repeats) {
  std::vector<double> ms;
  for (const Repeat& r : repeats) {
    for (const StepSample& s : r) ms.push_back(s.wall_ms);
  }
  if (ms.empty()) return std::nullopt;
  return Median(std::move(ms));
}

ComparedVariant CompareOne(const SideVariant& a, const SideVariant& b, const CompareOptions& options) {
  ComparedVariant c;
  c.label_a = a.label;
  c.label_b = b.label;
  c.ok_a = OkCount(a);
  c.trials_a = static_cast<int>(a.trials.size());
  c.ok_b = OkCount(b);
  c.trials_b = static_cast<int>(b.trials.size());
  const std::vector<Repeat> ra = OkRepeats(a);
  const std::vector<Repeat> rb = OkRepeats(b);
  c.noise_a = CheckNoise(ra, options.limits);
  c.noise_b = CheckNoise(rb, options.limits);
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
  std::set<int64_t> ids_a, ids_b;
  for (const store::RunTrial* t : a.trials) ids_a.insert(t->trial_id);
  for (const store::RunTrial* t : b.trials) ids_b.insert(t->trial_id);
  if (ids_a == ids_b) c.note = "the same trials (a run reused the other's results; --force measures again)";
  c.ratio = BootstrapSpeedup(ra, rb, options.resamples, options.seed);
  c.verdict = Judge(*c.ratio, options.threshold);
  if (c.verdict.change == Change::kNoChange && !c.verdict.within_threshold) {
    c.repeats_needed =
        RepeatsNeeded(std::min(c.noise_a.repeats, c.noise_b.repeats), RelativeHalfWidth(*c.ratio), options.threshold);
  }
  return c;
}

std::string Percent(double threshold) { return fmt::format("{:g}%", threshold * 100); }

std::string Signed(double ratio) { return fmt::format("{:+.1f}%", (ratio - 1) * 100); }

std::string Short(const std::string& hash, size_t n = 12) { return hash.substr(0, n); }

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  return v.empty() ? "-" : fmt::format("{}", fmt::join(v, sep));
}

std::string VerdictWord(const ComparedVariant& v) { return v.ratio ? ChangeName(v.verdict.change) : ""; }

std::string Notes(const ComparedVariant& v) {
  std::vector<std::string> notes;
  if (!v.note.empty()) notes.push_back(v.note);
  if (v.noise_a.unstable()) notes.emplace_back("A unstable");
  if (v.noise_b.unstable()) notes.emplace_back("B unstable");
  return fmt::format("{}", fmt::join(notes, "; "));
}

std::string Samples(const std::optional<double>& v) { return v ? fmt::format("{:.1f}", *v) : "-"; }

// The lines after the table: variants in one run only, noise, and the gate's verdict.
std::vector<std::string> Remarks(const Comparison& c, bool gate) {
  std::vector<std::string> out;
  if (!c.only_in_a.empty()) out.push_back(fmt::format("only in A: {}", Join(c.only_in_a)));
  if (!c.only_in_b.empty()) out.push_back(fmt::format("only in B: {}", Join(c.only_in_b)));
  for (const ComparedVariant& v : c.variants) {
    for (const auto& [side, noise] : {std::pair{"A", &v.noise_a}, std::pair{"B", &v.noise_b}}) {
      if (!noise->unstable()) continue;
      out.push_back(fmt::format("noise: {} ({}): {}", side[0] == 'A' ? v.label_a : v.label_b, side,
                                fmt::join(noise->reasons, "; ")));
    }
    if (v.repeats_needed) {
      out.push_back(
          fmt::format("noise: {}: the interval {:.3f}-{:.3f} is wider than ±{}; ~{} repeats per run (now "
                      "{}) would resolve it",
                      v.label(), v.ratio->low, v.ratio->high, Percent(c.threshold), *v.repeats_needed,
                      std::min(v.noise_a.repeats, v.noise_b.repeats)));
    }
  }
  if (gate) {
    const std::vector<std::string> slower = c.Regressions();
    if (slower.empty()) {
      out.push_back(fmt::format("regression gate: passed (no variant slower beyond {})", Percent(c.threshold)));
    } else {
      out.push_back(fmt::format("regression gate: failed: {} slower beyond {}: {}", slower.size(), Percent(c.threshold),
                                Join(slower)));
    }
  }
  return out;
}

nlohmann::ordered_json RunJson(const store::RunOverview& r) {
  return {{"run_id", r.id},
          {"experiment", r.experiment},
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

std::string ShortDate(const std::string& iso) {
  return iso.size() < 16 ? iso : iso.substr(0, 10) + " " + iso.substr(11, 5);
}

Verdict Judge(const SpeedupInterval& ratio, double threshold) {
  if (ratio.low > 1 + threshold) return {Change::kFaster, false};
  if (ratio.high < 1 - threshold) return {Change::kSlower, false};
  return {Change::kNoChange, ratio.low >= 1 - threshold && ratio.high <= 1 + threshold};
}

const char* ChangeName(Change change) {
  switch (change) {
    case Change::kFaster:
      return "faster";
    case Change::kSlower:
      return "slower";
    case Change::kNoChange:
      return "no change";
  }
  return "";
}

std::string VerdictText(const Verdict& verdict, double threshold) {
  if (verdict.change != Change::kNoChange) return ChangeName(verdict.change);
  return verdict.within_threshold ? fmt::format("no change (below the {} threshold)", Percent(threshold))
                                  : "no change (inconclusive)";
}

std::vector<std::string> Comparison::Regressions() const {
  std::vector<std::string> out;
  for (const ComparedVariant& v : variants) {
    if (v.ratio && v.verdict.change == Change::kSlower) out.push_back(v.label());
  }
  return out;
}

Comparison Compare(const CompareSide& a, const CompareSide& b, const CompareOptions& options) {
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
    if (!va.empty() && !vb.empty()) c.variants.push_back(CompareOne(va.front(), vb.front(), options));
    return c;
  }
  std::set<std::string> in_a;
  for (const SideVariant& v : va) {
    in_a.insert(v.key);
    const auto match = std::find_if(vb.begin(), vb.end(), [&](const SideVariant& w) { return w.key == v.key; });
    if (match == vb.end()) {
      c.only_in_a.push_back(v.label);
    } else {
      c.variants.push_back(CompareOne(v, *match, options));
    }
  }
  for (const SideVariant& w : vb) {
    if (!in_a.count(w.key)) c.only_in_b.push_back(w.label);
  }
  return c;
}

std::string DescribeRun(const store::RunOverview& r) {
  return fmt::format("run {} of {}: {} {}, {}, {}, {}, {}", r.id, r.experiment, BuildName(r),
                     r.build_type.empty() ? "" : r.build_type, ShortDate(r.started_at), r.host, Join(r.devices),
                     r.status);
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
      ratio = fmt::format("{:.3f} ({:.3f}-{:.3f})", v.ratio->estimate, v.ratio->low, v.ratio->high);
      change = fmt::format("{} ({} to {})", Signed(v.ratio->estimate), Signed(v.ratio->low), Signed(v.ratio->high));
      verdict = VerdictText(v.verdict, c.threshold);
    }
    t.rows.push_back(
        {v.label(), Samples(v.samples_per_s_a), Samples(v.samples_per_s_b), ratio, change, verdict, Notes(v)});
  }
  return t;
}

DataTable CompareDataTable(const Comparison& c) {
  DataTable t;
  t.columns = {"label_a",    "label_b",      "samples_per_s_a", "samples_per_s_b", "step_ms_a", "step_ms_b",
               "ratio",      "ratio_ci_low", "ratio_ci_high",   "change_pct",      "verdict",   "within_threshold",
               "unstable_a", "unstable_b",   "repeats_needed",  "noise",           "note"};
  for (const ComparedVariant& v : c.variants) {
    store::Value ratio, low, high, pct, verdict, within, needed;
    if (v.ratio) {
      ratio = v.ratio->estimate;
      low = v.ratio->low;
      high = v.ratio->high;
      pct = (v.ratio->estimate - 1) * 100;
      verdict = VerdictWord(v);
      within = int64_t{v.verdict.within_threshold ? 1 : 0};
    }
    if (v.repeats_needed) needed = int64_t{*v.repeats_needed};
    std::vector<std::string> noise;
    for (const auto& r : v.noise_a.reasons) noise.push_back("A: " + r);
    for (const auto& r : v.noise_b.reasons) noise.push_back("B: " + r);
    t.rows.push_back({v.label_a, v.label_b, NumberOrNull(v.samples_per_s_a), NumberOrNull(v.samples_per_s_b),
                      NumberOrNull(v.step_ms_a), NumberOrNull(v.step_ms_b), ratio, low, high, pct, verdict, within,
                      int64_t{v.noise_a.unstable() ? 1 : 0}, int64_t{v.noise_b.unstable() ? 1 : 0}, needed,
                      fmt::format("{}", fmt::join(noise, "; ")), v.note});
  }
  return t;
}

std::string RenderComparison(const Comparison& c, const store::RunOverview& a, const store::RunOverview& b,
                             OutputFormat format, bool gate) {
  const std::vector<std::string> env = EnvironmentDifferences(a, b);
  if (format == OutputFormat::kCsv) return RenderCsv(CompareDataTable(c));
  if (format == OutputFormat::kJson) {
    nlohmann::ordered_json doc = {{"a", RunJson(a)},
                                  {"b", RunJson(b)},
                                  {"threshold", c.threshold},
                                  {"environment_differences", env},
                                  {"variants", ToJson(CompareDataTable(c))},
                                  {"only_in_a", c.only_in_a},
                                  {"only_in_b", c.only_in_b},
                                  {"regressions", c.Regressions()}};
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
  line(fmt::format("B/A is the throughput ratio (samples/s); threshold ±{}", Percent(c.threshold)));
  out += "\n";
  const TextTable table = CompareTextTable(c);
  if (table.rows.empty()) {
    out += "no variant with the same configuration in both runs\n";
  } else {
    out += md ? RenderMarkdown(table) : RenderText(table);
  }
  const std::vector<std::string> remarks = Remarks(c, gate);
  if (!remarks.empty()) {
    out += "\n";
    for (const std::string& r : remarks) line(r);
  }
  return out;
}

}  // namespace runx::report
