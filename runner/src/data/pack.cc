#include "data/pack.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>

#include <sys/statvfs.h>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "data/npy.h"
#include "data/pack_manifest.h"
#include "data/sources.h"

namespace runx::data {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kChunkBytes = int64_t{64} << 20;

PackedFile Describe(const std::string& path, const torch::Tensor& t) {
  return {path, DtypeName(t.scalar_type()), t.sizes().vec(), t.numel() * static_cast<int64_t>(t.element_size())};
}

PackedFile Save(const fs::path& dir, const char* name, const torch::Tensor& t) {
  const std::string path = (dir / name).string();
  SaveNpy(path, t);
  return Describe(path, t);
}

double Round4(double x) { return std::round(x * 1e4) / 1e4; }

/// Mean and standard deviation of uint8 pixels scaled to [0, 1], from a histogram (no float copy).
std::pair<double, double> PixelStats(const torch::Tensor& bytes) {
  const auto c = bytes.contiguous();
  const auto* p = c.data_ptr<uint8_t>();
  std::array<int64_t, 256> count{};
  for (int64_t i = 0, n = c.numel(); i < n; ++i) ++count[p[i]];
  double sum = 0, sq = 0;
  for (int v = 0; v < 256; ++v) {
    sum += static_cast<double>(count[v]) * v / 255.0;
    sq += static_cast<double>(count[v]) * (v / 255.0) * (v / 255.0);
  }
  const double n = static_cast<double>(std::max<int64_t>(1, c.numel())), mean = sum / n;
  return {mean, std::sqrt(std::max(0.0, sq / n - mean * mean))};
}

PackResult PackFashionMnist(const nlohmann::json& data, const fs::path& dir) {
  const auto a = LoadFashionMnist(data);
  PackResult r;
  r.files.push_back(Save(dir, "train_inputs.npy", a.train_x));
  r.files.push_back(Save(dir, "train_labels.npy", a.train_y));
  r.files.push_back(Save(dir, "eval_inputs.npy", a.test_x));
  r.files.push_back(Save(dir, "eval_labels.npy", a.test_y));
  const auto [mean, std] = PixelStats(a.train_x);
  r.data = {{"eval_path", r.files[2].path},
            {"eval_labels", r.files[3].path},
            {"num_classes", 10},
            {"normalize", {{"mean", Round4(mean)}, {"std", Round4(std)}}}};
  return r;
}

/// Synthetic samples as the host placement draws them (standard normal, uniform labels), written in
/// chunks so that any count fits in memory.
PackResult PackSynthetic(const nlohmann::json& data, uint64_t seed, const fs::path& dir, int64_t count) {
  if (count <= 0)
    throw DataError("synthetic data has no size of its own; give the number of samples to write with --count N");
  const auto shape = data.at("shape").get<std::vector<int64_t>>();
  const int64_t classes = data.at("num_classes").get<int64_t>();
  int64_t sample = 1;
  for (auto d : shape) sample *= d;
  // What the pack writes (float32 inputs, int64 labels) must fit the folder's file system, checked
  // before anything is written (a count of 1e14 is a typo, not a plan).
  const double bytes = static_cast<double>(count) * (static_cast<double>(sample) * 4 + 8);
  struct statvfs fs_stat {};
  if (::statvfs(dir.c_str(), &fs_stat) == 0) {
    const double free = static_cast<double>(fs_stat.f_bavail) * static_cast<double>(fs_stat.f_frsize);
    if (bytes > free)
      throw DataError(
          fmt::format("--count {} writes {:.3g} GB ({} float32 values a sample and a label), and '{}' "
                      "has {:.3g} GB free; pack fewer samples or into another folder",
                      count, bytes / 1e9, sample, dir.string(), free / 1e9));
  }
  const int64_t chunk = std::max<int64_t>(1, kChunkBytes / (sample * 4));
  std::vector<int64_t> full{count};
  full.insert(full.end(), shape.begin(), shape.end());
  const std::string inputs = (dir / "train_inputs.npy").string();
  NpyWriter writer(inputs, torch::kFloat, full);
  auto gen = at::detail::createCPUGenerator(seed);
  for (int64_t done = 0; done < count; done += chunk) {
    std::vector<int64_t> part{std::min(chunk, count - done)};
    part.insert(part.end(), shape.begin(), shape.end());
    const auto x = torch::randn(part, gen, torch::kFloat);
    writer.Append(x.data_ptr(), static_cast<size_t>(x.numel()) * sizeof(float));
  }
  writer.Commit();
  PackResult r;
  r.files.push_back({inputs, "float32", full, count * sample * 4});
  r.files.push_back(Save(dir, "train_labels.npy", torch::randint(classes, {count}, gen, torch::kLong)));
  r.data = {{"num_classes", classes}};
  return r;
}

}  // namespace

PackResult Pack(const nlohmann::json& data, uint64_t seed, const std::string& out_dir, int64_t count) {
  const std::string source = data.at("source").get<std::string>();
  if (source == "memmap")
    throw DataError("the experiment's data is memmap already; pack converts synthetic or fashion-mnist data");
  if (source == "text")
    throw DataError(
        "text data packs itself: the first trial that reads a text tokenizes it into the cache folder "
        "($RUNX_CACHE_DIR, else ~/.cache/runx) and later trials map that pack; there is nothing to pack");
  if (source != "synthetic" && source != "fashion-mnist")
    throw DataError(fmt::format("cannot pack data source '{}'; expected 'synthetic' or 'fashion-mnist'", source));
  if (count > 0 && source != "synthetic")
    throw DataError("--count is for synthetic data; fashion-mnist packs its own samples (cut them with --train-limit)");
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec || !fs::is_directory(out_dir))
    throw DataError(fmt::format("cannot create the output folder '{}': {}", out_dir,
                                ec ? ec.message() : "it exists and is not a folder"));
  const fs::path dir = fs::absolute(out_dir).lexically_normal();
  PackResult r = source == "synthetic" ? PackSynthetic(data, seed, dir, count) : PackFashionMnist(data, dir);
  // Last: the manifest that tells this pack's files from those of a pack stopped midway.
  std::vector<std::string> written;
  for (const auto& f : r.files) written.push_back(f.path);
  WritePackManifest(written);
  r.data["source"] = "memmap";
  r.data["path"] = r.files[0].path;
  r.data["labels"] = r.files[1].path;
  r.data["batch_size"] = data.value("batch_size", nlohmann::json(128));
  if (!data.value("shuffle", true)) r.data["shuffle"] = false;
  return r;
}

}  // namespace runx::data
