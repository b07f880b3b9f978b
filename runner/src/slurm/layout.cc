#include "slurm/layout.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/files.h"

namespace runx::slurm {
namespace fs = std::filesystem;

std::string Layout::ArrayScript() const { return dir + "/array.sbatch"; }
std::string Layout::MergeScript() const { return dir + "/merge.sbatch"; }
std::string Layout::Manifest() const { return dir + "/submission.json"; }
std::string Layout::StoresDir() const { return dir + "/stores"; }
std::string Layout::LogsDir() const { return dir + "/logs"; }
std::string Layout::ExitDir() const { return dir + "/exit"; }
std::string Layout::SeedStore() const { return StoresDir() + "/seed.db"; }
std::string Layout::ShardStore(const std::string& shard) const { return StoresDir() + "/shard-" + shard + ".db"; }
std::string Layout::ShardLog(const std::string& shard, const std::string& stream) const {
  return LogsDir() + "/shard-" + shard + "." + stream;
}
std::string Layout::ShardExit(const std::string& shard) const { return ExitDir() + "/shard-" + shard; }
std::string Layout::MergeLog(const std::string& stream) const { return LogsDir() + "/merge." + stream; }
std::string Layout::MergeExit() const { return ExitDir() + "/merge"; }

std::string ToJson(const Manifest& m) {
  const nlohmann::ordered_json j = {{"experiment", m.experiment},
                                    {"name", m.name},
                                    {"store", m.store},
                                    {"workdir", m.workdir},
                                    {"submitted_at", m.submitted_at},
                                    {"array_job", m.array_job},
                                    {"merge_job", m.merge_job},
                                    {"shards", m.shards},
                                    {"max_parallel", m.max_parallel},
                                    {"shard_trials", m.shard_trials},
                                    {"overrides", m.overrides}};
  return j.dump(2) + "\n";
}

Manifest ManifestFromJson(const std::string& text) {
  try {
    const auto j = nlohmann::json::parse(text);
    Manifest m;
    m.experiment = j.at("experiment").get<std::string>();
    m.name = j.at("name").get<std::string>();
    m.store = j.at("store").get<std::string>();
    m.workdir = j.at("workdir").get<std::string>();
    m.submitted_at = j.at("submitted_at").get<std::string>();
    m.array_job = j.at("array_job").get<std::string>();
    m.merge_job = j.at("merge_job").get<std::string>();
    m.shards = j.at("shards").get<int>();
    m.max_parallel = j.at("max_parallel").get<int>();
    m.shard_trials = j.at("shard_trials").get<std::vector<int>>();
    m.overrides = j.at("overrides").get<std::vector<std::string>>();
    if (m.shards < 1 || m.shard_trials.size() != static_cast<size_t>(m.shards))
      throw std::runtime_error(fmt::format("{} shards but {} trial counts", m.shards, m.shard_trials.size()));
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(e.what());
  }
}

std::vector<int> TrialsPerShard(int trials, int shards) {
  std::vector<int> out(static_cast<size_t>(std::max(shards, 0)), 0);
  for (int t = 0; t < trials && shards > 0; ++t) ++out[static_cast<size_t>(t % shards)];
  return out;
}

std::string SubmissionsDirOf(const std::string& store) { return (fs::path(store).parent_path() / "slurm").string(); }

std::string NewSubmissionDir(const std::string& parent, const std::string& name, const std::string& utc_stamp) {
  std::string clean = name.empty() ? "experiment" : name;
  for (char& c : clean)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '-';
  const std::string base = (fs::path(parent) / (clean + "-" + utc_stamp)).string();
  std::string dir = base;
  std::error_code ec;
  for (int n = 2; fs::exists(dir, ec); ++n) dir = fmt::format("{}-{}", base, n);
  return dir;
}

std::optional<std::string> LatestSubmissionDir(const std::string& parent) {
  std::error_code ec;
  std::optional<std::pair<std::string, std::string>> best;  // (submitted_at, dir)
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const Layout layout{it->path().string()};
    const auto text = base::ReadFile(layout.Manifest());
    if (!text) continue;
    try {
      const auto m = ManifestFromJson(*text);
      std::pair<std::string, std::string> key{m.submitted_at, layout.dir};
      if (!best || key > *best) best = key;
    } catch (const std::runtime_error&) {
      continue;  // not a submission folder
    }
  }
  if (!best) return std::nullopt;
  return best->second;
}

std::optional<char> UnsafeForSbatch(const std::string& path) {
  for (char c : path)
    if (c == ' ' || c == '"' || c == '\'' || c == '\\' || c == '%' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return c;
  return std::nullopt;
}

}  // namespace runx::slurm
