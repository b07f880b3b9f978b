#pragma once
// `runx merge`: the runs and trials of other results stores (written on other machines, or by the
// shards of a sweep into files of their own) added to one store. Rows are matched by their global
// identities (runs.uid, trials.uid; experiments by name, path and sha256), so merging twice adds
// nothing and nothing is lost or doubled; ids are the output's own. docs/design.md ("Merging
// stores") gives the rules. No LibTorch.
#include <cstdint>
#include <string>
#include <vector>

namespace runx::store {

struct MergeOptions {
  /// Merge runs that an input still has `running` (a live shard) as they are now, status included;
  /// without it such an input is refused, since its results are not complete yet.
  bool allow_running = false;
  /// Every runner of the inputs has ended (the tasks of a finished SLURM job array): a run an
  /// input still has `running` was killed before it could say so (SIGKILL, a node that failed),
  /// and is merged as `interrupted`, with the trials it finished. The input itself stays as it is.
  bool runners_ended = false;
};

/// What a merge did with the rows of one input (or of all of them).
struct MergeCounts {
  int64_t runs_added = 0;
  int64_t runs_present = 0;  ///< already in the output (same uid): their new trials still come along
  int64_t runs_updated = 0;  ///< of the present ones, those whose status moved on (e.g. interrupted -> ok)
  int64_t trials_added = 0;
  int64_t trials_present = 0;     ///< already in the output (same uid)
  int64_t memberships_added = 0;  ///< run_trials rows (a run's own and reused trials)
  int64_t experiments_added = 0;

  MergeCounts& operator+=(const MergeCounts& other);
};

struct MergedInput {
  std::string path;
  int schema_version = 0;  ///< as found; an older input was read through a migrated copy
  int64_t runs_ended = 0;  ///< runs it had `running`, merged as `interrupted` (runners_ended)
  MergeCounts counts;
};

struct MergeResult {
  bool created = false;  ///< the output store did not exist before
  std::vector<MergedInput> inputs;
  MergeCounts total;
};

/// Merges the stores `inputs` into the store `out` (created if missing, migrated if older), in
/// ONE transaction: on any error nothing of the merge is in `out` (a store created for it is
/// removed again) and StoreError says why. Every input is checked before `out` is opened: it
/// must be a runx store, at most as new as this runx (an older one is read through a migrated
/// copy in a temporary directory); a run still `running` refuses the input unless
/// `options.allow_running`. Inputs are only read, through snapshots: nothing in or beside them
/// changes. `out` may not be one of the inputs.
MergeResult MergeStores(const std::string& out, const std::vector<std::string>& inputs,
                        const MergeOptions& options = {});

/// The tables a merge copies, in the order it copies them; the others of the schema are
/// `MergeSkippedTables()` (a test checks that the two cover every table).
const std::vector<std::string>& MergedTables();
/// claims (a live runner's, meaningless in another store) and schema_version.
const std::vector<std::string>& MergeSkippedTables();

}  // namespace runx::store
