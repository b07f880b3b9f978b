#include "data/data.h"

#include <zlib.h>

#include <filesystem>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "spec/catalogue.h"

namespace runx::data {
namespace {

// The catalogue declares each source's keys (torch-free); MakeDataSource makes exactly its sources.
TEST(DataSources, MakesEverySourceOfTheCatalogue) {
  EXPECT_EQ(DataSourceNames(), spec::DataCatalogue().Names());
  try {
    MakeDataSource({{"source", "foo"}, {"batch_size", 2}}, c10::Device(c10::kCPU), 0);
    ADD_FAILURE() << "made an unknown source";
  } catch (const DataError& e) {
    EXPECT_STREQ(e.what(), "unknown data source 'foo'; expected 'synthetic', 'fashion-mnist', 'memmap' or 'text'");
  }
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("runx_data_test_" + name)).string();
}

TEST(Idx, ReadsGzippedFileWithHeaderShape) {
  const std::string path = TempPath("small.idx.gz");
  const unsigned char header[] = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4};
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, header, sizeof header);
  for (unsigned char i = 0; i < 24; ++i) gzwrite(f, &i, 1);
  gzclose(f);
  auto t = ReadIdx(path);
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(t[1][2][3].item<int>(), 23);
}

TEST(Idx, RejectsNonIdx) {
  const std::string path = TempPath("bad.idx");
  FILE* f = fopen(path.c_str(), "wb");
  fputs("hello world, not idx", f);
  fclose(f);
  EXPECT_THROW(ReadIdx(path), DataError);
  EXPECT_THROW(ReadIdx(TempPath("missing.idx")), DataError);
}

TEST(FashionMnist, RealFilesLoadAndBatch) {
  nlohmann::json d{{"source", "fashion-mnist"}, {"batch_size", 100}, {"train_limit", 1000}};
  auto src = MakeDataSource(d, torch::kCPU, 1);
  EXPECT_EQ(src->batches_per_epoch(), 10);
  auto b = src->Next();
  EXPECT_EQ(b.input.sizes(), (std::vector<int64_t>{100, 1, 28, 28}));
  EXPECT_EQ(b.input.dtype(), torch::kFloat);
  EXPECT_NEAR(src->EvalSet()->input.mean().item<double>(), 0.0, 0.1);  // normalised
  EXPECT_EQ(src->EvalSet()->target.size(0), 10000);
  EXPECT_EQ(std::get<0>(torch::_unique(src->EvalSet()->target)).size(0), 10);
}

TEST(FashionMnist, MissingDirectoryNamesThePackage) {
  nlohmann::json d{{"source", "fashion-mnist"}, {"batch_size", 10}, {"path", "/nonexistent"}};
  try {
    MakeDataSource(d, torch::kCPU, 1);
    FAIL();
  } catch (const DataError& e) {
    EXPECT_STREQ(e.what(),
                 "fashion-mnist: 'train-images-idx3-ubyte' not found in '/nonexistent'; install it with "
                 "'apt-get install dataset-fashion-mnist' or set data.path");
  }
}

}  // namespace
}  // namespace runx::data
