#include "data/memmap.h"

#include <cstdint>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "data/npy.h"
#include "data/pack_manifest.h"
#include "data/sources.h"

namespace runx::data {
namespace {

std::string ShapeText(c10::IntArrayRef shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

bool IsIntegral(c10::ScalarType t) { return c10::isIntegralType(t, /*includeBool=*/false); }

/// data.normalize.mean / .std: a number or a list of numbers.
std::vector<double> Values(const nlohmann::json& v, double fallback) {
  if (v.is_null()) return {fallback};
  if (v.is_number()) return {v.get<double>()};
  return v.get<std::vector<double>>();
}

}  // namespace

torch::Tensor MapArray(const std::string& path, const std::string& key, const ArrayLayout& layout,
                       std::shared_ptr<const MappedFile>* file_out) {
  std::shared_ptr<const MappedFile> file;
  try {
    file = std::make_shared<const MappedFile>(path);
  } catch (const DataError& e) {
    throw DataError(fmt::format("memmap {}: {}", key, e.what()));
  }
  const auto size = static_cast<int64_t>(file->size());
  c10::ScalarType dtype;
  std::vector<int64_t> shape;
  int64_t offset = 0;
  if (IsNpy(file->data(), file->size())) {
    const NpyHeader h = ParseNpyHeader(file->data(), file->size(), path);
    if (h.shape.empty())
      throw DataError(fmt::format("'{}' ({}) holds a single value; expected one row per sample", path, key));
    const std::vector<int64_t> sample(h.shape.begin() + 1, h.shape.end());
    const bool dtype_differs = layout.check_npy && layout.dtype && *layout.dtype != h.dtype;
    const bool shape_differs = layout.sample_shape && !layout.sample_shape->empty() && *layout.sample_shape != sample;
    if (dtype_differs || shape_differs)
      throw DataError(fmt::format("'{}' ({}) holds {} samples of shape {}, not {} {} as {} says", path, key,
                                  DtypeName(h.dtype), ShapeText(sample),
                                  layout.dtype ? DtypeName(*layout.dtype) : DtypeName(h.dtype),
                                  ShapeText(layout.sample_shape ? *layout.sample_shape : sample), layout.from));
    if (h.data_offset + h.data_bytes() != size)
      throw DataError(fmt::format("'{}' ({}) is {} bytes, but its .npy header ({} {}) says {}; the file is {}", path,
                                  key, size, DtypeName(h.dtype), ShapeText(h.shape), h.data_offset + h.data_bytes(),
                                  h.data_offset + h.data_bytes() > size ? "truncated" : "longer than its data"));
    dtype = h.dtype;
    shape = h.shape;
    offset = h.data_offset;
  } else {
    if (!layout.dtype || !layout.sample_shape)
      throw DataError(
          fmt::format("'{}' ({}) is not a .npy file; to read it as raw binary give data.dtype and "
                      "data.shape (the shape of one sample)",
                      path, key));
    dtype = *layout.dtype;
    int64_t sample_bytes = static_cast<int64_t>(c10::elementSize(dtype));
    for (auto d : *layout.sample_shape) sample_bytes *= d;
    if (sample_bytes <= 0 || size % sample_bytes != 0)
      throw DataError(
          fmt::format("'{}' ({}) is {} bytes, not a whole number of samples of {} bytes ({} {}); check "
                      "{}",
                      path, key, size, sample_bytes, DtypeName(dtype), ShapeText(*layout.sample_shape), layout.from));
    shape = {size / sample_bytes};
    shape.insert(shape.end(), layout.sample_shape->begin(), layout.sample_shape->end());
  }
  const std::byte* data = file->data() + offset;
  if (reinterpret_cast<uintptr_t>(data) % c10::elementSize(dtype) != 0)
    throw DataError(
        fmt::format("'{}' ({}): its data starts at byte {}, not aligned to its {}-byte elements; save it "
                    "again with a recent NumPy",
                    path, key, offset, c10::elementSize(dtype)));
  if (file_out) *file_out = file;
  // Read-only pages: tensors over them must never be written in place. The deleter holds the
  // mapping for as long as any tensor shares this storage.
  return torch::from_blob(
      const_cast<std::byte*>(data), shape, [file](void*) {}, torch::TensorOptions().dtype(dtype));
}

MemmapSource::MemmapSource(const nlohmann::json& d, const c10::Device& device, uint64_t seed)
    : MemmapSource(Open(d, device, seed)) {}

MemmapSource::MemmapSource(Opened opened)
    : HostTensors(std::move(opened.options)), inputs_file_(std::move(opened.inputs_file)) {}

MemmapSource::Opened MemmapSource::Open(const nlohmann::json& d, const c10::Device& device, uint64_t seed) {
  if (!d.contains("path") || !d.contains("labels"))
    throw DataError("memmap data needs data.path (the inputs file) and data.labels (the labels file)");
  ArrayLayout inputs_layout{std::nullopt, std::nullopt, "data.dtype and data.shape"};
  if (d.contains("dtype")) inputs_layout.dtype = DtypeFromName(d["dtype"].get<std::string>());
  if (d.contains("shape")) inputs_layout.sample_shape = d["shape"].get<std::vector<int64_t>>();
  // Labels: a .npy file's own dtype, else data.label_dtype (raw default: int64).
  ArrayLayout labels_layout{DtypeFromName(d.value("label_dtype", std::string("int64"))), std::vector<int64_t>{},
                            "data.label_dtype", d.contains("label_dtype")};
  const auto labels_of = [&](const std::string& key, const torch::Tensor& inputs, const std::string& inputs_key) {
    const std::string path = d.at(key).get<std::string>();
    auto labels = MapArray(path, "data." + key, labels_layout);
    if (labels.dim() == 2 && labels.size(1) == 1) labels = labels.reshape({-1});
    if (labels.dim() != 1)
      throw DataError(fmt::format("'{}' (data.{}) has shape {}; expected one label per sample, shape [N]", path, key,
                                  ShapeText(labels.sizes())));
    if (!IsIntegral(labels.scalar_type()))
      throw DataError(
          fmt::format("'{}' (data.{}) holds {}; labels must be integers (class indices): convert them, "
                      "e.g. labels.astype('int64')",
                      path, key, DtypeName(labels.scalar_type())));
    if (labels.size(0) != inputs.size(0))
      throw DataError(fmt::format("'{}' (data.{}) has {} labels for the {} samples of data.{}", path, key,
                                  labels.size(0), inputs.size(0), inputs_key));
    return labels;
  };

  // Files of one `runx data pack`, not of two (one stopped midway).
  std::vector<std::string> files;
  for (const char* key : {"path", "labels", "eval_path", "eval_labels"})
    if (d.contains(key) && d[key].is_string()) files.push_back(d[key].get<std::string>());
  CheckPackManifest(files);

  Opened out;
  HostTensorsOptions& o = out.options;
  o.name = "memmap";
  const spec::DataConfig common = spec::DataConfig::From(d);
  const bool shuffle = common.shuffle;
  o.inputs = MapArray(d["path"].get<std::string>(), "data.path", inputs_layout, &out.inputs_file);
  out.inputs_file->Advise(shuffle ? MappedFile::Access::kRandom : MappedFile::Access::kSequential);
  if (o.inputs.dim() < 2)
    throw DataError(fmt::format("'{}' (data.path) has shape {}; expected [N, ...] with at least one value per sample",
                                d["path"].get<std::string>(), ShapeText(o.inputs.sizes())));
  o.labels = labels_of("labels", o.inputs, "path");
  if (d.contains("train_limit")) {
    const int64_t n = std::min(o.inputs.size(0), d["train_limit"].get<int64_t>());
    o.inputs = o.inputs.narrow(0, 0, n);
    o.labels = o.labels.narrow(0, 0, n);
  }
  if (d.contains("eval_path") != d.contains("eval_labels"))
    throw DataError("memmap data needs both data.eval_path and data.eval_labels for accuracy, or neither");
  if (d.contains("eval_path")) {
    const std::string path = d["eval_path"].get<std::string>();
    const ArrayLayout eval_layout{o.inputs.scalar_type(),
                                  std::vector<int64_t>(o.inputs.sizes().begin() + 1, o.inputs.sizes().end()),
                                  "the training inputs (data.path)"};
    o.eval_inputs = MapArray(path, "data.eval_path", eval_layout);
    o.eval_labels = labels_of("eval_labels", o.eval_inputs, "eval_path");
  }

  // Classes: data.num_classes, else the largest label + 1; every label must be below.
  const auto lo = o.labels.min().item<int64_t>(), hi = o.labels.max().item<int64_t>();
  int64_t eval_lo = lo, eval_hi = hi;
  if (o.eval_labels.defined() && o.eval_labels.numel() > 0) {
    eval_lo = o.eval_labels.min().item<int64_t>();
    eval_hi = o.eval_labels.max().item<int64_t>();
  }
  if (std::min(lo, eval_lo) < 0)
    throw DataError(
        fmt::format("memmap: the labels hold {}; labels must be class indices >= 0", std::min(lo, eval_lo)));
  o.num_classes = d.value("num_classes", hi + 1);
  if (std::max(hi, eval_hi) >= o.num_classes)
    throw DataError(
        fmt::format("memmap: the labels hold {}, not below data.num_classes {}", std::max(hi, eval_hi), o.num_classes));

  const bool bytes = o.inputs.scalar_type() == c10::ScalarType::Byte;
  const auto norm = d.value("normalize", nlohmann::json::object());
  o.normalization.scale = d.value("scale", bytes ? 1.0 / 255.0 : 1.0);
  o.normalization.mean = Values(norm.value("mean", nlohmann::json()), 0.0);
  o.normalization.std = Values(norm.value("std", nlohmann::json()), 1.0);
  o.batch_size = common.batch_size;
  o.shuffle = shuffle;
  o.seed = seed;
  o.device = device;
  return out;
}

std::unique_ptr<DataSource> MakeMemmap(const nlohmann::json& d, const c10::Device& device, uint64_t seed) {
  return std::make_unique<MemmapSource>(d, device, seed);
}

}  // namespace runx::data
