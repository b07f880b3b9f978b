#pragma once
// The store the HTML report's tests read: the example store (test_support.h) plus a run 4 of
// mlp_amp whose figures are known by construction, and an experiment whose history has verdicts.
#include <string>

#include "store/store.h"
#include "test_support.h"

namespace runx::report::testing {

/// Run 4 of mlp_amp, started 2026-12-04, bootstrap seed (plan.order_seed) 7:
///   - baseline (2 repeats, config h-baseline as in runs 1 and 2): 1 warmup step (12 ms, loss 3)
///     and 4 measured steps of 10, 10.1, 10.2, 10.3 ms with 8 samples each (800 samples/s: slower
///     than run 2's baseline, ~1016) and losses 2, 1.5, 1, 0.5; peak memory 100 and 110 MiB,
///     reserved 200 and 190 MiB;
///   - fast (2 repeats): steps of half the time (5, 5.05, 5.1, 5.15 ms: speedup exactly 2 on the
///     pooled throughput), losses 0.5 above the baseline's, peak 50 MiB, no reserved memory, and
///     auto_batch probes: batch 8 (fits: 2 ms, 4000 samples/s, 10 MiB), 16 (fits: 3 ms, 16/3*1000
///     samples/s, 20 MiB), 32 (out of memory); chosen 16.
inline constexpr double kMiB = 1024.0 * 1024.0;
void AddRun4(const std::string& db);

/// Experiment 'steady' (after AddRun4: runs 5 to 10, started 2026-12-10 to 2026-12-15), one
/// variant (`steady`, the baseline), one process a run, measured steps of 60, 61, 60, 61, 80 and
/// 60 ms (+0..4 ms, 64 samples each). The first runs agree, so later comparisons have a verdict:
/// run 9 is slower than run 8, run 10 faster than run 9. Runs 5 to 8 have no commit of the user's
/// repository; runs 9 and 10 ran commit 1234567abc (10 with uncommitted changes), run 10 tagged 'fix'.
inline constexpr int64_t kSteadyFirst = 5;
void AddSteadyRuns(const std::string& db);

/// A run of mlp_amp started 2026-12-20 whose baseline has three processes (repeats), of 5
/// measured steps of 60..64, 62..66 and 66..70 ms (64 samples each): the fewest processes a
/// history point's interval is drawn from (kMinSpreadDf + 1). Returns its id.
int64_t AddThreeProcessRun(const std::string& db);

}  // namespace runx::report::testing
