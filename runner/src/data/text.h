#pragma once
// `data.source: text`: next-token prediction over a real text. The text (a file, or a folder's text
// files: spec::ListTextFiles) is tokenized once into a pack (text_pack.h) in the cache folder and
// the pack's tokens.npy mapped into memory. The last data.val_fraction of the tokens are held out;
// each split is cut into blocks every seq_len tokens: sample i is x = t[i*L, i*L+L) with targets
// y = t[i*L+1, i*L+L+1), both views of the mapping. Batches are made by HostTensors (shuffled
// blocks, a new order each epoch) and reach the model as int64 token ids.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/Device.h>
#include <torch/types.h>
#include <nlohmann/json.hpp>

#include "data/host_tensors.h"
#include "data/text_pack.h"
#include "spec/text_data.h"

namespace runx::data {

class TextSource : public HostTensors {
 public:
  /// Throws DataError: no such path, no text in it, a text too short for data.seq_len, ...
  TextSource(const nlohmann::json& d, const c10::Device& device, uint64_t seed);
  std::vector<std::pair<std::string, std::string>> Facts() const override;

  const TextPack& pack() const { return pack_; }
  /// Every token of the text, [N] in the pack's dtype, over the mapped file.
  const torch::Tensor& tokens() const { return tokens_; }
  spec::TokenSplit split() const { return split_; }

 private:
  struct Opened {
    HostTensorsOptions options;
    TextPack pack;
    torch::Tensor tokens;
    spec::TokenSplit split;
  };
  explicit TextSource(Opened opened);
  static Opened Open(const nlohmann::json& d, const c10::Device& device, uint64_t seed);
  TextPack pack_;
  torch::Tensor tokens_;
  spec::TokenSplit split_;
  int64_t train_blocks_ = 0, val_blocks_ = 0;
};

}  // namespace runx::data
