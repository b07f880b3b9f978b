#include "slurm/script.h"

#include <cstdint>

#include <fmt/format.h>

namespace runx::slurm {
namespace {

// The #SBATCH lines both jobs share after their own: partition, working directory, no requeue
// (a requeued task would find its own earlier run in its store, held by a process on another
// node that runx cannot see end), the user's options.
std::string CommonDirectives(const JobSpec& spec) {
  std::string out;
  if (!spec.partition.empty()) out += fmt::format("#SBATCH --partition={}\n", spec.partition);
  out += "#SBATCH --no-requeue\n";
  for (const auto& o : spec.sbatch_options) out += fmt::format("#SBATCH {}\n", o);
  return out;
}

// `text` for inside double quotes in bash: the characters special there escaped, then the
// marker kShard turned into the shell variable $shard.
constexpr const char* kShard = "@SHARD@";
std::string DqBody(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '$' || c == '`' || c == '"' || c == '\\') out += '\\';
    out += c;
  }
  for (size_t at = out.find(kShard); at != std::string::npos; at = out.find(kShard, at))
    out.replace(at, std::string(kShard).size(), "$shard");
  return out;
}
std::string Dq(const std::string& text) { return "\"" + DqBody(text) + "\""; }

std::string Setup(const JobSpec& spec) {
  std::string out = fmt::format("cd {} || exit 1\n", ShellQuote(spec.workdir));
  for (const auto& line : spec.setup) out += line + "\n";
  return out;
}

}  // namespace

std::string MergeJobName(const std::string& store) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (unsigned char c : store) h = (h ^ c) * 1099511628211ull;
  return fmt::format("runx-merge-{:08x}", static_cast<uint32_t>(h ^ (h >> 32)));
}

std::string ArraySpec(int shards, int max_parallel) {
  std::string out = fmt::format("0-{}", shards - 1);
  if (max_parallel > 0 && max_parallel < shards) out += fmt::format("%{}", max_parallel);
  return out;
}

std::string ShellQuote(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of(
                                       "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                       "0123456789@%+=:,./_-") == std::string::npos;
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string ArrayScript(const JobSpec& spec) {
  const Layout& l = spec.layout;
  std::string out = "#!/bin/bash\n";
  out += fmt::format(
      "# runx submit: shard $SLURM_ARRAY_TASK_ID of {} of {}, one array task per shard.\n"
      "# Each task writes a results store of its own (one writer per SQLite file); merge.sbatch adds\n"
      "# them to {} once every task has ended.\n",
      spec.shards, spec.experiment, spec.store);
  out += fmt::format("#SBATCH --job-name={}\n", spec.job_name);
  out += fmt::format("#SBATCH --array={}\n", ArraySpec(spec.shards, spec.max_parallel));
  if (!spec.time.empty()) out += fmt::format("#SBATCH --time={}\n", spec.time);
  if (spec.gpus_per_trial > 0) out += fmt::format("#SBATCH --gres=gpu:{}\n", spec.gpus_per_trial);
  if (spec.cpus_per_task > 0) out += fmt::format("#SBATCH --cpus-per-task={}\n", spec.cpus_per_task);
  out += fmt::format("#SBATCH --output={}\n", l.ShardLog("%a", "out"));
  out += fmt::format("#SBATCH --error={}\n", l.ShardLog("%a", "err"));
  out += CommonDirectives(spec);
  out += Setup(spec);
  const std::string runx = ShellQuote(spec.runx);
  out += fmt::format("shard=\"${{SLURM_ARRAY_TASK_ID:?submit this script with sbatch: it is a job array}}\"\n");
  out += fmt::format("store={}\n", Dq(l.ShardStore(kShard)));
  out += fmt::format("export RUNX_ARTIFACT_DIR=\"${{RUNX_ARTIFACT_DIR:-{}}}\"\n", DqBody(spec.artifacts));
  if (!spec.compiled.empty())
    out += fmt::format("export RUNX_COMPILED_DIR=\"${{RUNX_COMPILED_DIR:-{}}}\"\n", DqBody(spec.compiled));
  if (spec.reuse && !spec.force)
    out += fmt::format(
        "# Start from the results store as it was at submission (runx submit copied it), so that its ok\n"
        "# trials are reused: a resubmission runs only what is missing. A plain copy of a file nobody\n"
        "# writes; a requeued or repeated task keeps the store it has.\n"
        "if [ -f {0} ] && [ ! -e \"$store\" ]; then\n"
        "  cp {0} \"$store.tmp\" && mv \"$store.tmp\" \"$store\" ||\n"
        "    echo \"runx submit: note: could not copy {1}: the shard's trials run again\" >&2\n"
        "fi\n",
        Dq(l.SeedStore()), DqBody(l.SeedStore()));
  out +=
      "# SIGTERM (time limit, scancel) reaches runx too: it ends the running trial, keeps the\n"
      "# finished ones, marks its run interrupted and exits 130, which is recorded below.\n"
      "trap 'echo \"runx submit: shard $shard: SIGTERM (time limit or scancel)\" >&2' TERM\n";
  std::string run =
      fmt::format("{} run {} --shard \"$shard/{}\" --db \"$store\"", runx, ShellQuote(spec.experiment), spec.shards);
  if (spec.force) run += " --force";
  if (spec.any_build) run += " --any-build";
  if (!spec.sweep_id.empty()) run += " --sweep-id " + ShellQuote(spec.sweep_id);
  for (const auto& o : spec.overrides) run += " --set " + ShellQuote(o);
  out += run + "\n";
  out += "status=$?\n";
  out += fmt::format("echo \"$status\" >{}\n", Dq(l.ShardExit(kShard)));
  out += "exit \"$status\"\n";
  return out;
}

std::string MergeScript(const JobSpec& spec) {
  const Layout& l = spec.layout;
  std::string out = "#!/bin/bash\n";
  out += fmt::format(
      "# runx submit: adds the shard stores of the job array in array.sbatch to {}.\n"
      "# Submitted with --dependency=afterany:<array job>,singleton: it runs once every task has ended,\n"
      "# whatever their outcome, and merges what they finished; merges into the same store (jobs of\n"
      "# the same name) run one at a time.\n",
      spec.store);
  out += fmt::format("#SBATCH --job-name={}\n", MergeJobName(spec.store));
  out += "#SBATCH --ntasks=1\n";
  out += fmt::format("#SBATCH --output={}\n", l.MergeLog("out"));
  out += fmt::format("#SBATCH --error={}\n", l.MergeLog("err"));
  out += CommonDirectives(spec);
  out += Setup(spec);
  out += "stores=()\n";
  out += fmt::format("for shard in $(seq 0 {}); do\n", spec.shards - 1);
  out += fmt::format("  store={}\n", Dq(l.ShardStore(kShard)));
  out += "  if [ -f \"$store\" ]; then\n";
  out += "    stores+=(\"$store\")\n";
  out += "  else\n";
  out += fmt::format("    echo \"runx submit: shard $shard left no results store (see {})\" >&2\n",
                     DqBody(l.ShardLog(kShard, "err")));
  out += "  fi\n";
  out += "done\n";
  out += "if [ ${#stores[@]} -eq 0 ]; then\n";
  out += "  echo \"runx submit: error: no shard left a results store: nothing to merge\" >&2\n";
  out += "  status=1\n";
  out += "else\n";
  out += "  # Every task has ended: a run a shard store still has running was killed (SIGKILL, a node\n";
  out += "  # that failed); --runners-ended marks it interrupted and merges the trials it finished.\n";
  out +=
      fmt::format("  {} merge --runners-ended {} \"${{stores[@]}}\"\n", ShellQuote(spec.runx), ShellQuote(spec.store));
  out += "  status=$?\n";
  out += fmt::format("  [ \"$status\" != 0 ] || rm -f {}\n", Dq(l.SeedStore()));
  out += "fi\n";
  out += fmt::format("echo \"$status\" >{}\n", Dq(l.MergeExit()));
  out += "exit \"$status\"\n";
  return out;
}

std::vector<std::string> ArraySubmitCommand(const JobSpec& spec) {
  return {"sbatch", "--parsable", spec.layout.ArrayScript()};
}

std::vector<std::string> MergeSubmitCommand(const JobSpec& spec, const std::string& array_job) {
  return {"sbatch", "--parsable", "--dependency=afterany:" + array_job + ",singleton", spec.layout.MergeScript()};
}

}  // namespace runx::slurm
