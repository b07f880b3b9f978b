// `runx data pack` and the data sources placed on the host, through the real binary: pack
// Fashion-MNIST, train on the packed files with `source: memmap`, read the result from the store.
#include <filesystem>
#include <fstream>
#include <string>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include "../remove_tree.h"
#include "run_util.h"

namespace {
namespace fs = std::filesystem;

using runx::testing::Runx;

class Data : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_data_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    db_ = (dir_ / "runx.db").string();
  }
  void TearDown() override { runx::testing::RemoveTree(dir_.string()); }
  std::string Write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  fs::path dir_;
  std::string db_;
};

const char* const kTrain =
    "train:\n"
    "  optimizer: {name: adamw, lr: 0.002}\n"
    "  warmup_steps: 2\n"
    "  epochs: 1\n";

TEST_F(Data, PackFashionMnistThenTrainOnTheMappedFiles) {
  const std::string out = (dir_ / "packed").string();
  auto pack = Runx("data pack --source fashion-mnist --train-limit 6000 --out " + out);
  ASSERT_EQ(pack.status, 0) << pack.out;
  for (const char* f : {"train_inputs.npy", "train_labels.npy", "eval_inputs.npy", "eval_labels.npy"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  EXPECT_EQ(fs::file_size(fs::path(out) / "train_inputs.npy"), 128u + 6000u * 28 * 28);  // uint8, [6000, 1, 28, 28]
  EXPECT_NE(pack.out.find("train_inputs.npy   uint8    [6000, 1, 28, 28]"), std::string::npos) << pack.out;

  // The printed data section, as a user would paste it.
  const size_t at = pack.out.find("data:\n");
  ASSERT_NE(at, std::string::npos) << pack.out;
  const std::string data = pack.out.substr(at);
  EXPECT_NE(data.find("  source: memmap\n  path: " + out + "/train_inputs.npy\n"), std::string::npos) << data;
  EXPECT_NE(data.find("  normalize: {mean: 0.2857, std: 0.3537}\n"), std::string::npos) << data;
  const auto yaml =
      Write("memmap.yaml", "name: memmap-fm\ndevice: cpu\nmodel: {name: mlp, hidden: [64]}\n" + data + kTrain);
  auto run = Runx(yaml + " --db " + db_ + " -q");
  ASSERT_EQ(run.status, 0) << run.out;

  SQLite::Database db(db_);
  SQLite::Statement q(db, "SELECT status, accuracy, samples_per_s FROM trial_summary");
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getString(), "ok");
  const double accuracy = q.getColumn(1).getDouble();
  std::printf("memmap fashion-mnist (6000 samples, 1 epoch): accuracy %.4f\n", accuracy);
  EXPECT_GE(accuracy, 0.7);  // 46 steps of a small MLP on real data
  EXPECT_GT(q.getColumn(2).getDouble(), 0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM steps WHERE phase = 'measure'").getInt(), 6000 / 128);
  const std::string config = db.execAndGet("SELECT config_json FROM trials").getString();
  EXPECT_NE(config.find("\"source\":\"memmap\""), std::string::npos) << config;
}

TEST_F(Data, PackSyntheticFromAnExperiment) {
  const auto yaml = Write("synthetic.yaml",
                          "name: syn\ndevice: cpu\nseed: 3\nmodel: {name: mlp, hidden: [16]}\n"
                          "data: {source: synthetic, shape: [8], num_classes: 3, batch_size: 10}\n");
  auto no_count = Runx("data pack " + yaml + " --out " + (dir_ / "syn").string());
  EXPECT_EQ(no_count.status, 1);
  EXPECT_NE(no_count.out.find("error: synthetic data has no size of its own; give the number of samples to write "
                              "with --count N"),
            std::string::npos)
      << no_count.out;
  auto pack = Runx("data pack " + yaml + " --count 100 --out " + (dir_ / "syn").string());
  ASSERT_EQ(pack.status, 0) << pack.out;
  EXPECT_EQ(fs::file_size(dir_ / "syn" / "train_inputs.npy"), 128u + 100u * 8 * 4);  // float32, [100, 8]
  const std::string data = pack.out.substr(pack.out.find("data:\n"));
  EXPECT_NE(data.find("  num_classes: 3\n  batch_size: 10\n"), std::string::npos) << data;
  auto run = Runx(Write("packed.yaml", "name: syn-packed\ndevice: cpu\nmodel: {name: mlp, hidden: [16]}\n" + data +
                                           "train: {warmup_steps: 1, steps: 5}\n") +
                  " --db " + db_ + " -q --strict");
  EXPECT_EQ(run.status, 0) << run.out;
}

TEST_F(Data, PackErrorsAreClear) {
  auto neither = Runx("data pack --out " + (dir_ / "x").string());
  EXPECT_EQ(neither.status, 2);
  EXPECT_NE(neither.out.find("error: runx data pack takes an experiment file or --source, and got neither"),
            std::string::npos)
      << neither.out;
  auto missing = Runx("data pack --source fashion-mnist --path /nonexistent --out " + (dir_ / "x").string());
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.out.find("error: fashion-mnist: 'train-images-idx3-ubyte' not found in '/nonexistent'"),
            std::string::npos)
      << missing.out;
  const auto bad = Write("bad.yaml", "name: b\nmodel: {name: mlp}\ndata: {source: memmap, batch_size: 8}\n");
  auto invalid = Runx("data pack " + bad + " --out " + (dir_ / "x").string());
  EXPECT_EQ(invalid.status, 2);
  EXPECT_NE(invalid.out.find(bad + ":3:1: error: missing required key 'path' in 'data'"), std::string::npos)
      << invalid.out;
}

TEST_F(Data, MemmapFileErrorIsAFailedTrialNamingTheFile) {
  const auto yaml = Write("gone.yaml",
                          "name: gone\ndevice: cpu\nmodel: {name: mlp}\n"
                          "data: {source: memmap, path: /nonexistent/x.npy, labels: y.npy, batch_size: 8}\n"
                          "train: {steps: 2}\n");
  auto run = Runx(yaml + " --db " + db_ + " -q");
  EXPECT_EQ(run.status, 0) << run.out;
  SQLite::Database db(db_);
  EXPECT_EQ(db.execAndGet("SELECT status FROM trials").getString(), "failed");
  EXPECT_EQ(db.execAndGet("SELECT error FROM trials").getString(),
            "memmap data.path: cannot open '/nonexistent/x.npy': No such file or directory");
}

TEST_F(Data, HostPlacementTrainsThroughTheLoader) {
  const auto yaml = Write("host.yaml", std::string("name: host\ndevice: cpu\nmodel: {name: mlp, hidden: [64]}\n"
                                                   "data: {source: fashion-mnist, batch_size: 100, train_limit: 3000, "
                                                   "placement: host}\n") +
                                           kTrain);
  auto run = Runx(yaml + " --db " + db_ + " -q");
  ASSERT_EQ(run.status, 0) << run.out;
  SQLite::Database db(db_);
  EXPECT_EQ(db.execAndGet("SELECT status FROM trial_summary").getString(), "ok");
  EXPECT_GT(db.execAndGet("SELECT accuracy FROM trial_summary").getDouble(), 0.6);

  // produce_ms is paid on the host for each batch: the steps' data time shows it.
  const auto slow = Write("slow.yaml",
                          "name: slow\ndevice: cpu\nmodel: {name: mlp, hidden: [8]}\n"
                          "data: {source: synthetic, shape: [16], num_classes: 2, batch_size: 4, "
                          "placement: host, produce_ms: 25}\n"
                          "train: {warmup_steps: 1, steps: 4, eval: false}\n");
  ASSERT_EQ(Runx(slow + " --db " + db_ + " -q").status, 0);
  EXPECT_GE(db.execAndGet("SELECT min(data_ms) FROM steps s JOIN trials t ON t.id = s.trial_id "
                          "WHERE t.config_json LIKE '%produce_ms%'")
                .getDouble(),
            25.0);
}

}  // namespace
