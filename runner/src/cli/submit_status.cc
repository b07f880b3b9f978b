#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/load.h"
#include "cli/submit.h"
#include "plugins/dirs.h"
#include "report/table.h"
#include "slurm/status.h"

namespace runx::cli {
namespace {
namespace fs = std::filesystem;

std::vector<std::string> Row(const slurm::JobStatus& job) {
  return {job.name, job.job, job.state, job.exit ? std::to_string(*job.exit) : "-", job.results};
}

}  // namespace

void PrintMessage(const slurm::Message& message) {
  switch (message.kind) {
    case slurm::Message::Kind::kError:
      fmt::print(stderr, "runx: error: {}\n", message.text);
      if (!message.hint.empty()) fmt::print(stderr, "hint: {}\n", message.hint);
      break;
    case slurm::Message::Kind::kWarning:
      fmt::print(stderr, "runx: warning: {}\n", message.text);
      break;
    case slurm::Message::Kind::kNote:
      fmt::print(stderr, "runx submit: {}\n", message.text);
      break;
  }
}

bool PrintSubmissionStatus(const slurm::Layout& layout, const slurm::Manifest& m) {
  const slurm::SubmissionStatus s = slurm::ReadStatus(layout, m);
  fmt::print("submission {}\n", layout.dir);
  fmt::print("  {} ({}): {} trials in {} shards, submitted {}\n", m.name, m.experiment, s.trials, m.shards,
             m.submitted_at);
  fmt::print("  results store: {}\n", m.store);
  fmt::print("  job states: {}\n\n", s.source.empty() ? "unknown (" + s.problem + ")" : "from " + s.source);

  report::TextTable table{{"shard", "job", "state", "exit", "results"}, {false, false, false, true, false}, {}};
  for (const auto& shard : s.shards) table.rows.push_back(Row(shard));
  table.rows.push_back(Row(s.merge));
  fmt::print("{}\n", report::RenderText(table));

  if (s.ended_shards > s.ok_shards)
    fmt::print("{} of {} shards did not end ok: submitting the same again runs only the trials {} lacks\n",
               s.ended_shards - s.ok_shards, m.shards, m.store);
  if (s.merged) {
    fmt::print("merged into {}: runx history {} --db {}\n", m.store, m.name, m.store);
  } else if (s.merge_did_not_run) {
    fmt::print("the merge did not run: merge the shard stores with: runx merge --runners-ended {} {}/shard-*.db\n",
               m.store, layout.StoresDir());
  }
  return s.AllOk();
}

int SubmitStatus(const SubmitArgs& args) {
  try {
    std::string dir = *args.status;
    if (dir.empty()) {
      std::string store = args.db.value_or("results/runx.db");
      if (!args.db && !args.file.empty()) {  // the experiment's own store
        const auto loaded =
            LoadPlan(args.file, args.overrides, std::nullopt, spec::SchemaSet::Load(plugins::PluginDirs()));
        if (!loaded) return 2;
        store = loaded->experiment.config.value("results", store);
      }
      dir = slurm::LatestSubmissionFor(store);
    }
    const slurm::Layout layout{fs::absolute(dir).lexically_normal().string()};
    const slurm::Manifest manifest = slurm::ReadSubmission(layout);
    if (args.wait) slurm::WaitForSubmission(layout, manifest, PrintMessage);
    const bool ok = PrintSubmissionStatus(layout, manifest);
    return args.wait && !ok ? 1 : 0;
  } catch (const slurm::SubmitError& e) {
    PrintMessage(slurm::Message::Error(e.what(), e.hint()));
    return 2;
  }
}

}  // namespace runx::cli
