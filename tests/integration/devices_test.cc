// `runx --devices`: trials in parallel, one per device, through the real binary. Two CPU slots
// stand in for two GPUs: the trials overlap in time, each slot runs its trials in plan order, the
// store says which slot ran what, and trials that shared the CPU side by side carry that in their
// identity: a sequential run afterwards measures anew, another side-by-side run reuses them.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "store_fixture.h"

namespace {
namespace fs = std::filesystem;
using runx::testing::Runx;

class Devices : public runx::testing::StoreFixture {
 protected:
  Devices() : StoreFixture("runx_devices") {}
  void SetUp() override {
    StoreFixture::SetUp();
    setenv("RUNX_PLUGIN_PATH", RUNX_TEST_PLUGIN_GOOD_DIR, 1);
  }
  void TearDown() override {
    unsetenv("RUNX_PLUGIN_PATH");
    StoreFixture::TearDown();
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }
  std::vector<std::vector<std::string>> Rows(const std::string& db, const std::string& sql) {
    const auto r = Runx("query --db " + db + " --format csv \"" + sql + "\"");
    EXPECT_EQ(r.status, 0) << r.out;
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(r.out);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      std::vector<std::string> cells;
      std::istringstream l(line);
      for (std::string cell; std::getline(l, cell, ',');) cells.push_back(cell);
      rows.push_back(cells);
    }
    return rows;
  }
};

// Four trials (baseline and test_good, two repeats), each over 2 s of sleeping steps: long enough
// for the store's one-second timestamps to show whether they overlapped.
const char* const kSweep =
    "name: parallel\n"
    "device: cpu\n"
    "model: {name: mlp, hidden: [8]}\n"
    "data: {source: synthetic, shape: [8], num_classes: 2, batch_size: 4}\n"
    "train: {warmup_steps: 1, steps: 8, eval: false}\n"
    "optimizations: {test_sleep: {ms: 250}}\n"
    "repeats: 2\n"
    "sweep: {mode: ablation, axes: {optimizations: [test_good]}}\n";

TEST_F(Devices, TrialsRunSideBySideInPlanOrderPerDeviceWithTheirIdentities) {
  const std::string file = Write("sweep.yaml", kSweep), db = Path("p.db");
  const auto r = Runx(file + " --db " + db + " --devices cpu,cpu");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("started on cpu"), std::string::npos) << r.out;
  const auto trials = Rows(db,
                           "SELECT t.order_index, e1.value, t.started_at, t.finished_at, t.status FROM trials t "
                           "JOIN environment e1 ON e1.trial_id = t.id AND e1.key = 'device_slot_index' "
                           "ORDER BY t.order_index");
  ASSERT_EQ(trials.size(), 4u);
  std::map<std::string, std::vector<std::vector<std::string>>> per_slot;
  for (const auto& t : trials) {
    EXPECT_EQ(t[4], "ok");
    per_slot[t[1]].push_back(t);
  }
  ASSERT_EQ(per_slot.size(), 2u) << "both devices ran trials";
  // Within a device, plan order: each trial starts after the one before it on that device ended.
  for (const auto& [slot, list] : per_slot)
    for (size_t i = 1; i < list.size(); ++i) EXPECT_GE(list[i][2], list[i - 1][3]) << "slot " << slot;
  // Across devices, trials overlapped: some trial of slot 1 started before one of slot 0 ended.
  bool overlapped = false;
  for (const auto& a : per_slot["0"])
    for (const auto& b : per_slot["1"]) overlapped |= b[2] < a[3] && a[2] < b[3];
  EXPECT_TRUE(overlapped);
  EXPECT_EQ(Rows(db, "SELECT DISTINCT device FROM trials").size(), 1u);  // "cpu"

  // Two CPU trials shared the cores: their timings are not a sequential run's, so the same sweep
  // run sequentially reuses none of them, and another side-by-side run reuses all four.
  EXPECT_EQ(
      Rows(db, "SELECT 1 FROM environment WHERE key = 'device_sharing' AND value = '2 cpu trials side by side'").size(),
      4u);
  const auto again = Runx(file + " --db " + db + " -q");
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_EQ(Rows(db, "SELECT 1 FROM run_trials WHERE run_id = 2 AND reused = 1").size(), 0u);
  const auto beside = Runx(file + " --db " + db + " -q --devices cpu,cpu");
  ASSERT_EQ(beside.status, 0) << beside.out;
  EXPECT_EQ(Rows(db, "SELECT 1 FROM run_trials WHERE run_id = 3 AND reused = 1").size(), 4u);
}

TEST_F(Devices, BadListsAreRefusedBeforeAnythingRuns) {
  const std::string file = Write("sweep.yaml", kSweep), db = Path("p.db");
  auto r = Runx(file + " --db " + db + " --devices gpu0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("runx: error: --devices: 'gpu0' is not a device; expected cuda:N, cpu or mps"),
            std::string::npos)
      << r.out;
  r = Runx(file + " --db " + db + " --devices cpu,cpu --in-process");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("cannot be combined with --in-process"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(db));
}

}  // namespace
