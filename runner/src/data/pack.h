#pragma once
// `runx data pack`: converts a data set runx reads (Fashion-MNIST, synthetic) into .npy files
// that `data.source: memmap` maps. No LibTorch in this header: the command line calls it;
// Pack throws std::runtime_error (DataError) with a message for the user.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace runx::data {

/// What `runx data pack` was asked for.
struct PackRequest {
  std::string experiment;         ///< an experiment file whose data section is packed, or empty
  std::vector<std::string> sets;  ///< --set overrides of the experiment
  std::string source;             ///< without an experiment: the source to pack (fashion-mnist)
  std::string path;               ///< without an experiment: data.path of the source
  int64_t train_limit = 0;        ///< > 0: only the first N training samples
  int64_t count = 0;              ///< synthetic: how many samples to write
  std::string out;                ///< the folder to write into (created)
};

/// One file written by Pack.
struct PackedFile {
  std::string path;  ///< absolute
  std::string dtype;
  std::vector<int64_t> shape;
  int64_t bytes = 0;
};

struct PackResult {
  std::vector<PackedFile> files;
  nlohmann::json data;  ///< the `data:` section that reads them (source: memmap, ...)
};

/// Packs the (resolved) data section `data` into `out_dir`: train_inputs.npy + train_labels.npy
/// (int64), and eval_inputs.npy + eval_labels.npy where the source has a held-out split. Each file
/// is written to a temporary name and renamed. Throws DataError.
PackResult Pack(const nlohmann::json& data, uint64_t seed, const std::string& out_dir, int64_t count);

}  // namespace runx::data
