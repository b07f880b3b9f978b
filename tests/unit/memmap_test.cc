// .npy files, memory-mapped data (zero-copy views, shuffled gathers), host placement of the
// synthetic and Fashion-MNIST sources, and `runx data pack`'s writer.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "../remove_tree.h"
#include "data/data.h"
#include "data/memmap.h"
#include "data/npy.h"
#include "data/pack.h"

namespace runx::data {
namespace {

namespace fs = std::filesystem;

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_memmap_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
  }
  void TearDown() override { runx::testing::RemoveTree(dir_.string()); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string WriteBytes(const std::string& name, const std::string& bytes) const {
    std::ofstream(Path(name), std::ios::binary) << bytes;
    return Path(name);
  }
  /// `n` samples of `shape`: sample i is filled with i (as `dtype`); labels i % classes.
  std::pair<std::string, std::string> Dataset(int64_t n, std::vector<int64_t> shape, torch::ScalarType dtype,
                                              int64_t classes, const std::string& stem = "train") const {
    std::vector<int64_t> full{n};
    full.insert(full.end(), shape.begin(), shape.end());
    auto x = torch::arange(n, torch::kDouble);
    for (size_t i = 0; i < shape.size(); ++i) x = x.unsqueeze(-1);
    SaveNpy(Path(stem + "_x.npy"), x.expand(full).to(dtype).contiguous());
    SaveNpy(Path(stem + "_y.npy"), torch::arange(n, torch::kLong).remainder(classes));
    return {Path(stem + "_x.npy"), Path(stem + "_y.npy")};
  }
  nlohmann::json MemmapConfig(const std::pair<std::string, std::string>& files, nlohmann::json batch,
                              bool shuffle) const {
    return {{"source", "memmap"},
            {"path", files.first},
            {"labels", files.second},
            {"batch_size", batch},
            {"shuffle", shuffle}};
  }
  static std::string ErrorOf(const std::function<void()>& f) {
    try {
      f();
    } catch (const DataError& e) {
      return e.what();
    }
    return "(no error)";
  }
  fs::path dir_;
};

using NpyFormat = Files;
using MemmapData = Files;
using HostPlacement = Files;
using DataPack = Files;

TEST_F(NpyFormat, RoundTripsEveryDtypeThroughFileAndMapping) {
  for (auto dtype : {torch::kUInt8, torch::kInt8, torch::kBool, torch::kInt16, torch::kInt32, torch::kInt64,
                     torch::kFloat16, torch::kFloat32, torch::kFloat64}) {
    SCOPED_TRACE(DtypeName(dtype));
    const auto t = (torch::rand({3, 4, 5}, torch::kDouble) * 100).to(dtype);
    SaveNpy(Path("a.npy"), t);
    EXPECT_EQ((fs::file_size(Path("a.npy")) - 3 * 4 * 5 * t.element_size()) % 64, 0u);  // data 64-byte aligned
    const auto loaded = LoadNpy(Path("a.npy"));
    EXPECT_EQ(loaded.scalar_type(), dtype);
    EXPECT_EQ(loaded.sizes(), t.sizes());
    EXPECT_TRUE(loaded.equal(t));
    EXPECT_TRUE(MapArray(Path("a.npy"), "test", {}).equal(t));
  }
  SaveNpy(Path("b.npy"), torch::arange(7, torch::kInt32));
  EXPECT_TRUE(LoadNpy(Path("b.npy")).equal(torch::arange(7, torch::kInt32)));
}

TEST_F(NpyFormat, HeaderIsWhatNumpyWrites) {
  const std::string h = NpyHeaderBytes(torch::kFloat, {3, 4});
  EXPECT_EQ(h.size(), 128u);
  EXPECT_EQ(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(static_cast<unsigned char>(h[8]) + 256 * static_cast<unsigned char>(h[9]), 118);
  EXPECT_EQ(h.substr(10, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }");
  EXPECT_EQ(h.find_first_not_of(' ', 10 + 59), 127u);
  EXPECT_EQ(h.back(), '\n');
  EXPECT_NE(NpyHeaderBytes(torch::kLong, {5}).find("'shape': (5,), }"), std::string::npos);
}

/// A .npy file with a hand-written header dict (version 1) and `data`.
std::string NpyWith(const std::string& dict, const std::string& data, int version = 1) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(version);
  out += '\0';
  const size_t n = dict.size();
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>(n >> 8);
  if (version > 1) out += std::string(2, '\0');
  return out + dict + data;
}

TEST_F(NpyFormat, ReadsVersion2AndPython2Longs) {
  const std::string data(6 * 4, '\0');
  WriteBytes("v2.npy", NpyWith("{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2L, 3L)}\n", data, 2));
  const auto t = LoadNpy(Path("v2.npy"));
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.scalar_type(), torch::kInt);
  // Fortran order is the same thing for one dimension.
  WriteBytes("f1.npy", NpyWith("{'descr': '|u1', 'fortran_order': True, 'shape': (4,), }\n", "abcd"));
  EXPECT_EQ(LoadNpy(Path("f1.npy")).size(0), 4);
}

TEST_F(NpyFormat, BadFilesAreClearErrors) {
  const auto err = [&](const std::string& name, const std::string& bytes) {
    WriteBytes(name, bytes);
    return ErrorOf([&] { LoadNpy(Path(name)); });
  };
  EXPECT_EQ(err("text.npy", "hello world, no magic"),
            "'" + Path("text.npy") + "' is not a .npy file (no \\x93NUMPY magic)");
  EXPECT_EQ(err("be.npy", NpyWith("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "abcd")),
            "'" + Path("be.npy") +
                "' holds big-endian data ('>f4'); runx reads little-endian only: convert it with "
                "a.astype(a.dtype.newbyteorder('<'))");
  EXPECT_EQ(err("f.npy", NpyWith("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", std::string(16, 'x'))),
            "'" + Path("f.npy") +
                "' is stored in Fortran (column-major) order; runx reads C order: save "
                "numpy.ascontiguousarray(a) instead");
  EXPECT_EQ(err("s.npy", NpyWith("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "abcd")),
            "'" + Path("s.npy") + "' holds a structured dtype [[\"a\",\"<f4\"]]; runx reads plain arrays of one dtype");
  EXPECT_EQ(err("u2.npy", NpyWith("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }", "abcd")),
            "'" + Path("u2.npy") +
                "' has dtype '<u2', which runx cannot read; expected one of '|u1' (uint8), "
                "'|i1' (int8), '|b1' (bool), '<i2' (int16), '<i4' (int32), '<i8' (int64), '<f2' (float16), "
                "'<f4' (float32), '<f8' (float64)");
  EXPECT_EQ(err("cut.npy", NpyWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2", "")),
            "'" + Path("cut.npy") +
                "' has a bad .npy header: expected ',' or ')' at offset 52 of \"{'descr': '<f4', "
                "'fortran_order': False, 'shape': (2\"");
  EXPECT_EQ(err("v9.npy", std::string("\x93NUMPY\x09\x00\x00\x00", 10)),
            "'" + Path("v9.npy") + "' is a .npy file of version 9.0; runx reads versions 1 to 3");
  // Truncated data: mapping checks the size exactly.
  WriteBytes("short.npy", NpyHeaderBytes(torch::kFloat, {4, 2}) + std::string(28, '\0'));
  EXPECT_EQ(ErrorOf([&] { MapArray(Path("short.npy"), "data.path", {}); }),
            "'" + Path("short.npy") +
                "' (data.path) is 156 bytes, but its .npy header (float32 [4, 2]) says 160; the "
                "file is truncated");
  EXPECT_EQ(ErrorOf([&] { MapArray(Path("missing.npy"), "data.labels", {}); }),
            "memmap data.labels: cannot open '" + Path("missing.npy") + "': No such file or directory");
}

TEST_F(MemmapData, RawFilesWithDtypeAndShape) {
  auto x = torch::arange(10 * 2 * 3, torch::kFloat).view({10, 2, 3});
  std::ofstream(Path("x.bin"), std::ios::binary).write(static_cast<const char*>(x.data_ptr()), x.numel() * 4);
  auto y = torch::tensor({0, 1, 2, 3, 4, 0, 1, 2, 3, 4}, torch::kUInt8);
  std::ofstream(Path("y.bin"), std::ios::binary).write(static_cast<const char*>(y.data_ptr()), 10);
  nlohmann::json d{{"source", "memmap"},      {"path", Path("x.bin")},  {"dtype", "float32"}, {"shape", {2, 3}},
                   {"labels", Path("y.bin")}, {"label_dtype", "uint8"}, {"batch_size", 4},    {"shuffle", false}};
  auto src = MakeDataSource(d, torch::kCPU, 0);
  EXPECT_TRUE(src->on_host());
  EXPECT_EQ(src->sample_shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(src->num_classes(), 5);  // the largest label + 1
  EXPECT_EQ(src->batches_per_epoch(), 2);
  EXPECT_FALSE(src->EvalSet().has_value());
  const Batch b = src->Get(1);
  EXPECT_TRUE(b.input.equal(x.narrow(0, 4, 4)));
  EXPECT_TRUE(b.target.equal(y.narrow(0, 4, 4)));
  EXPECT_THROW(src->Next(), std::logic_error);

  // Not a whole number of samples: the exact sizes in the message.
  std::ofstream(Path("odd.bin"), std::ios::binary) << std::string(50, 'x');
  d["path"] = Path("odd.bin");
  EXPECT_EQ(ErrorOf([&] { MakeDataSource(d, torch::kCPU, 0); }),
            "'" + Path("odd.bin") +
                "' (data.path) is 50 bytes, not a whole number of samples of 24 bytes (float32 "
                "[2, 3]); check data.dtype and data.shape");
  d.erase("dtype");
  EXPECT_EQ(ErrorOf([&] { MakeDataSource(d, torch::kCPU, 0); }),
            "'" + Path("odd.bin") +
                "' (data.path) is not a .npy file; to read it as raw binary give data.dtype and "
                "data.shape (the shape of one sample)");
}

TEST_F(MemmapData, InconsistentFilesAreClearErrors) {
  const auto train = Dataset(10, {3}, torch::kUInt8, 4);
  SaveNpy(Path("y9.npy"), torch::zeros({9}, torch::kLong));
  SaveNpy(Path("yf.npy"), torch::zeros({10}, torch::kFloat));
  SaveNpy(Path("yneg.npy"), torch::full({10}, -1, torch::kLong));
  auto d = MemmapConfig(train, 2, true);
  const auto err = [&](const char* key, nlohmann::json value) {
    auto e = d;
    e[key] = std::move(value);
    return ErrorOf([&] { MakeDataSource(e, torch::kCPU, 0); });
  };
  EXPECT_EQ(err("labels", Path("y9.npy")),
            "'" + Path("y9.npy") + "' (data.labels) has 9 labels for the 10 samples of data.path");
  EXPECT_EQ(err("labels", Path("yf.npy")), "'" + Path("yf.npy") +
                                               "' (data.labels) holds float32; labels must be "
                                               "integers (class indices): convert them, e.g. labels.astype('int64')");
  EXPECT_EQ(err("labels", Path("yneg.npy")), "memmap: the labels hold -1; labels must be class indices >= 0");
  EXPECT_EQ(err("num_classes", 3), "memmap: the labels hold 3, not below data.num_classes 3");
  EXPECT_EQ(err("dtype", "float32"), "'" + train.first +
                                         "' (data.path) holds uint8 samples of shape [3], not float32 "
                                         "[3] as data.dtype and data.shape says");
  EXPECT_EQ(err("batch_size", 11), "memmap: batch size 11 does not fit the training split (10 samples)");
  const auto eval = Dataset(5, {4}, torch::kUInt8, 4, "eval");
  d["eval_path"] = eval.first;
  EXPECT_EQ(err("eval_labels", eval.second), "'" + eval.first +
                                                 "' (data.eval_path) holds uint8 samples of shape [4], "
                                                 "not uint8 [3] as the training inputs (data.path) says");
}

TEST_F(MemmapData, UnshuffledBatchesAreViewsOfTheMappedFile) {
  const auto files = Dataset(8, {4}, torch::kFloat, 2);
  auto src = MakeDataSource(MemmapConfig(files, 2, false), torch::kCPU, 0);
  const auto& mapped = dynamic_cast<const MemmapSource&>(*src).inputs_file();
  const Batch b = src->Get(1);
  const auto* p = static_cast<const std::byte*>(b.input.data_ptr());
  EXPECT_GE(p, mapped.data());
  EXPECT_LT(p, mapped.data() + mapped.size());
  EXPECT_EQ(b.input[0][0].item<float>(), 2.0f);
  // The tensor is the file: a write to the file shows through it.
  const int fd = ::open(files.first.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const float v = 42.5f;
  const auto offset = static_cast<off_t>(p - mapped.data());
  ASSERT_EQ(::pwrite(fd, &v, sizeof v, offset), static_cast<ssize_t>(sizeof v));
  ::close(fd);
  EXPECT_EQ(b.input[0][0].item<float>(), 42.5f);
  // The next epoch, unshuffled, is the same rows again.
  EXPECT_EQ(src->Get(1 + src->batches_per_epoch()).input.data_ptr(), b.input.data_ptr());
  // Batches keep the mapping alive after the source is gone.
  src.reset();
  EXPECT_EQ(b.input[0][0].item<float>(), 42.5f);
  EXPECT_EQ(b.input[1][3].item<float>(), 3.0f);
}

TEST_F(MemmapData, ShuffledBatchesCoverEveryRowOncePerEpochDeterministically) {
  const auto files = Dataset(12, {2}, torch::kInt32, 12);  // label = row
  auto a = MakeDataSource(MemmapConfig(files, 3, true), torch::kCPU, 7);
  auto b = MakeDataSource(MemmapConfig(files, 3, true), torch::kCPU, 7);
  auto other_seed = MakeDataSource(MemmapConfig(files, 3, true), torch::kCPU, 8);
  ASSERT_EQ(a->batches_per_epoch(), 4);
  const auto epoch = [&](DataSource& s, int64_t e) {
    std::vector<torch::Tensor> parts;
    for (int64_t i = 0; i < 4; ++i) {
      const Batch batch = s.Get(e * 4 + i);
      EXPECT_TRUE(batch.input.select(1, 0).to(torch::kLong).equal(batch.target));  // rows stay with their labels
      parts.push_back(batch.target);
    }
    return torch::cat(parts);
  };
  const auto e0 = epoch(*a, 0), e1 = epoch(*a, 1);
  EXPECT_TRUE(std::get<0>(e0.sort()).equal(torch::arange(12, torch::kLong)));  // every row once
  EXPECT_TRUE(std::get<0>(e1.sort()).equal(torch::arange(12, torch::kLong)));
  EXPECT_FALSE(e0.equal(torch::arange(12, torch::kLong)));  // shuffled
  EXPECT_FALSE(e0.equal(e1));                               // a new order each epoch
  // The same (seed, index) gives the same batch, in any order of calls and in another source.
  EXPECT_TRUE(b->Get(5).target.equal(a->Get(5).target));
  EXPECT_TRUE(epoch(*b, 1).equal(e1));
  EXPECT_TRUE(epoch(*a, 0).equal(e0));
  EXPECT_FALSE(epoch(*other_seed, 0).equal(e0));
  // A gather is a copy, not a view of the file.
  const auto& mapped = dynamic_cast<const MemmapSource&>(*a).inputs_file();
  const auto* p = static_cast<const std::byte*>(a->Get(0).input.data_ptr());
  EXPECT_TRUE(p < mapped.data() || p >= mapped.data() + mapped.size());
}

TEST_F(MemmapData, GetIsSafeFromSeveralThreads) {
  const auto files = Dataset(64, {2}, torch::kInt32, 64);
  auto src = MakeDataSource(MemmapConfig(files, 4, true), torch::kCPU, 3);
  std::vector<torch::Tensor> expected;
  for (int64_t i = 0; i < 64; ++i) expected.push_back(src->Get(i).target);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int64_t i = 63 - t; i >= 0; --i)
        if (!src->Get(i).target.equal(expected[static_cast<size_t>(i)])) ++wrong;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(MemmapData, InputsStayInTheirDtypeUntilPrepared) {
  const auto files = Dataset(6, {2, 1, 1}, torch::kUInt8, 3);
  auto d = MemmapConfig(files, 3, false);
  auto src = MakeDataSource(d, torch::kCPU, 0);
  Batch b = src->Get(1);
  EXPECT_EQ(b.input.scalar_type(), torch::kUInt8);
  Batch p = src->Prepare(b);
  EXPECT_EQ(p.input.scalar_type(), torch::kFloat);
  EXPECT_EQ(p.target.scalar_type(), torch::kLong);
  EXPECT_NEAR(p.input[0][0][0][0].item<float>(), 3.0 / 255.0, 1e-7);  // uint8: / 255 by default
  EXPECT_EQ(b.input[0][0][0][0].item<int>(), 3);                      // the host batch is untouched
  // Normalization, per channel, and an explicit scale.
  d["scale"] = 2.0;
  d["normalize"] = {{"mean", {1.0, 2.0}}, {"std", 0.5}};
  src = MakeDataSource(d, torch::kCPU, 0);
  p = src->Prepare(src->Get(1));
  EXPECT_FLOAT_EQ(p.input[1][0][0][0].item<float>(), (4 * 2.0f - 1.0f) / 0.5f);
  EXPECT_FLOAT_EQ(p.input[1][1][0][0].item<float>(), (4 * 2.0f - 2.0f) / 0.5f);
  d["normalize"] = {{"mean", {1.0, 2.0, 3.0}}};
  EXPECT_EQ(ErrorOf([&] { MakeDataSource(d, torch::kCPU, 0); }),
            "memmap: data.normalize has 3 values, the samples have 2 channels (their first dimension); give one "
            "value or one per channel");
  // float inputs on the CPU, not normalized: model input is the mapped batch itself.
  const auto floats = Dataset(4, {2}, torch::kFloat, 2, "f");
  src = MakeDataSource(MemmapConfig(floats, 2, false), torch::kCPU, 0);
  b = src->Get(0);
  EXPECT_EQ(src->Prepare(b).input.data_ptr(), b.input.data_ptr());
}

TEST_F(MemmapData, EvalSetIsPreparedAndBatchSizeChanges) {
  const auto train = Dataset(20, {1, 2, 2}, torch::kUInt8, 4);
  const auto eval = Dataset(6, {1, 2, 2}, torch::kUInt8, 4, "eval");
  auto d = MemmapConfig(train, "auto", true);
  d["eval_path"] = eval.first;
  d["eval_labels"] = eval.second;
  d["normalize"] = {{"mean", 0.5}, {"std", 0.25}};
  auto src = MakeDataSource(d, torch::kCPU, 0);
  EXPECT_EQ(src->batch_size(), 1);  // "auto" until auto_batch sets it
  EXPECT_EQ(src->batches_per_epoch(), 20);
  src->set_batch_size(6);
  EXPECT_EQ(src->batches_per_epoch(), 3);
  EXPECT_EQ(src->Get(0).input.size(0), 6);
  EXPECT_THROW(src->set_batch_size(21), DataError);
  const auto e = src->EvalSet();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->input.scalar_type(), torch::kFloat);
  EXPECT_EQ(e->input.sizes(), (std::vector<int64_t>{6, 1, 2, 2}));
  EXPECT_FLOAT_EQ(e->input[5][0][1][1].item<float>(), (5 / 255.0f - 0.5f) / 0.25f);
  EXPECT_TRUE(e->target.equal(torch::tensor({0, 1, 2, 3, 0, 1}, torch::kLong)));
}

TEST_F(HostPlacement, SyntheticBatchesAreFreshDeterministicAndCostProduceMs) {
  nlohmann::json d{
      {"source", "synthetic"}, {"shape", {3, 4}}, {"num_classes", 5}, {"batch_size", 8}, {"placement", "host"}};
  auto src = MakeDataSource(d, torch::kCPU, 1);
  EXPECT_TRUE(src->on_host());
  EXPECT_THROW(src->Next(), std::logic_error);
  const Batch a = src->Get(3), again = src->Get(3), other = src->Get(4);
  EXPECT_EQ(a.input.device(), torch::Device(torch::kCPU));
  EXPECT_EQ(a.input.sizes(), (std::vector<int64_t>{8, 3, 4}));
  EXPECT_EQ(a.input.scalar_type(), torch::kFloat);
  EXPECT_TRUE(a.input.equal(again.input));
  EXPECT_TRUE(a.target.equal(again.target));
  EXPECT_NE(a.input.data_ptr(), again.input.data_ptr());  // fresh tensors per call
  EXPECT_FALSE(a.input.equal(other.input));
  EXPECT_LT(a.target.max().item<int64_t>(), 5);
  EXPECT_TRUE(MakeDataSource(d, torch::kCPU, 1)->Get(3).input.equal(a.input));  // per (seed, index)
  EXPECT_TRUE(src->Prepare(a).input.equal(a.input));
  src->set_batch_size(2);
  EXPECT_EQ(src->Get(0).input.size(0), 2);

  d["produce_ms"] = 40;
  src = MakeDataSource(d, torch::kCPU, 1);
  const auto t0 = std::chrono::steady_clock::now();
  src->Get(0);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(ms, 40.0);
}

TEST_F(HostPlacement, FashionMnistHostBatchesMatchTheDevicePlacement) {
  nlohmann::json d{{"source", "fashion-mnist"}, {"batch_size", 50}, {"train_limit", 500}, {"shuffle", false}};
  auto device_src = MakeDataSource(d, torch::kCPU, 1);
  d["placement"] = "host";
  auto host_src = MakeDataSource(d, torch::kCPU, 1);
  EXPECT_FALSE(device_src->on_host());
  EXPECT_TRUE(host_src->on_host());
  EXPECT_EQ(host_src->batches_per_epoch(), 10);
  EXPECT_EQ(host_src->sample_shape(), (std::vector<int64_t>{1, 28, 28}));
  EXPECT_EQ(host_src->num_classes(), 10);
  const Batch raw = host_src->Get(0);
  EXPECT_EQ(raw.input.scalar_type(), torch::kUInt8);  // bytes on the host, converted on the device
  const Batch prepared = host_src->Prepare(raw);
  const Batch reference = device_src->Next();
  EXPECT_TRUE(torch::allclose(prepared.input, reference.input, 1e-5, 1e-5));
  EXPECT_TRUE(prepared.target.equal(reference.target));
  EXPECT_TRUE(torch::allclose(host_src->EvalSet()->input, device_src->EvalSet()->input, 1e-5, 1e-5));
  // Shuffled: the epoch's batches hold the same samples in another order (pixel sums as their ids).
  const auto ids = [](const torch::Tensor& x) { return x.to(torch::kLong).flatten(1).sum(1); };
  std::vector<torch::Tensor> unshuffled, shuffled;
  for (int64_t i = 0; i < 10; ++i) unshuffled.push_back(ids(host_src->Get(i).input));
  d["shuffle"] = true;
  host_src = MakeDataSource(d, torch::kCPU, 1);
  for (int64_t i = 0; i < 10; ++i) shuffled.push_back(ids(host_src->Get(10 + i).input));
  const auto a = torch::cat(unshuffled), b = torch::cat(shuffled);
  EXPECT_FALSE(a.equal(b));
  EXPECT_TRUE(std::get<0>(a.sort()).equal(std::get<0>(b.sort())));
}

TEST_F(DataPack, SyntheticPacksToFilesMemmapReads) {
  nlohmann::json d{{"source", "synthetic"}, {"shape", {2, 3}}, {"num_classes", 4}, {"batch_size", 5}};
  const PackResult r = data::Pack(d, 3, Path("out"), 20);
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.files[0].shape, (std::vector<int64_t>{20, 2, 3}));
  EXPECT_EQ(r.files[0].dtype, "float32");
  EXPECT_EQ(r.data["source"], "memmap");
  EXPECT_EQ(r.data["path"], fs::absolute(Path("out/train_inputs.npy")).lexically_normal().string());
  EXPECT_EQ(r.data["num_classes"], 4);
  EXPECT_EQ(r.data["batch_size"], 5);
  for (const auto& entry : fs::directory_iterator(Path("out")))  // no temporary files left
    EXPECT_TRUE(entry.path().extension() == ".npy" || entry.path().filename() == "runx-pack.json") << entry.path();
  auto src = MakeDataSource(r.data, torch::kCPU, 0);
  EXPECT_EQ(src->sample_shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(src->batches_per_epoch(), 4);
  const auto x = LoadNpy(r.files[0].path);
  EXPECT_NEAR(x.mean().item<double>(), 0.0, 0.5);
  EXPECT_GT(x.std().item<double>(), 0.5);
  EXPECT_EQ(ErrorOf([&] { data::Pack(d, 3, Path("out"), 0); }),
            "synthetic data has no size of its own; give the number of samples to write with --count N");
  EXPECT_EQ(ErrorOf([&] { data::Pack(r.data, 3, Path("out"), 0); }),
            "the experiment's data is memmap already; pack converts synthetic or fashion-mnist data");
}

}  // namespace
}  // namespace runx::data
