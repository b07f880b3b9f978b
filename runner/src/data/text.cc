#include "data/text.h"

#include <algorithm>
#include <memory>
#include <tuple>

#include <fmt/format.h>
#include <torch/torch.h>

#include "data/memmap.h"
#include "data/sources.h"

namespace runx::data {
namespace {

/// `split` tokens from `start` cut into `blocks` samples of `seq_len`: inputs and next-token targets.
std::pair<torch::Tensor, torch::Tensor> Blocks(const torch::Tensor& tokens, int64_t start, int64_t blocks,
                                               int64_t seq_len) {
  const int64_t n = blocks * seq_len;
  return {tokens.narrow(0, start, n).view({blocks, seq_len}), tokens.narrow(0, start + 1, n).view({blocks, seq_len})};
}

/// The loss, in nats per token, of the model that knows only how often each token occurs: the
/// validation split's tokens predicted from the training split's token frequencies (each count
/// plus one, so that a token the training split lacks costs a finite amount), or the training
/// split's entropy when there is no validation split. A language model that learned anything
/// beyond frequencies goes below it.
double UnigramLoss(const torch::Tensor& tokens, const spec::TokenSplit& split, int64_t vocab_size) {
  const auto train = tokens.narrow(0, 0, split.train).to(torch::kLong);
  const auto counts = torch::bincount(train, /*weights=*/{}, vocab_size).to(torch::kDouble) + 1.0;
  const auto log_p = (counts / counts.sum()).log();
  if (split.val == 0) return -(log_p.exp() * log_p).sum().item<double>();
  const auto val = tokens.narrow(0, split.train, split.val).to(torch::kLong);
  return -log_p.index_select(0, val).mean().item<double>();
}

}  // namespace

TextSource::TextSource(const nlohmann::json& d, const c10::Device& device, uint64_t seed)
    : TextSource(Open(d, device, seed)) {}

TextSource::TextSource(Opened opened)
    : HostTensors(opened.options),
      pack_(std::move(opened.pack)),
      tokens_(std::move(opened.tokens)),
      split_(opened.split),
      train_blocks_(opened.options.inputs.size(0)),
      val_blocks_(opened.options.eval_inputs.defined() ? opened.options.eval_inputs.size(0) : 0) {}

TextSource::Opened TextSource::Open(const nlohmann::json& d, const c10::Device& device, uint64_t seed) {
  if (!d.contains("path") || !d.contains("seq_len"))
    throw DataError("text data needs data.path (a text file or a folder of them) and data.seq_len");
  const std::string path = d.at("path").get<std::string>();
  const int64_t seq_len = d.at("seq_len").get<int64_t>();
  if (seq_len < 1) throw DataError(fmt::format("text: data.seq_len must be positive, not {}", seq_len));
  const Tokenizer tokenizer = TokenizerFromName(d.value("tokenizer", std::string(spec::kDefaultTokenizer)));
  const double val_fraction = d.value("val_fraction", spec::kDefaultValFraction);
  if (val_fraction < 0 || val_fraction >= 1)
    throw DataError(fmt::format("text: data.val_fraction must be in [0, 1), not {}", val_fraction));

  std::vector<spec::TextFile> files;
  try {
    files = spec::ListTextFiles(path);
  } catch (const spec::TextDataError& e) {
    throw DataError(fmt::format("text data.path: {}", e.what()));
  }
  Opened out;
  try {
    out.pack = PackText(files, tokenizer, TextPackDir(TextCacheRoot(), files, tokenizer));
  } catch (const spec::TextDataError& e) {  // a file that cannot be read while packing
    throw DataError(e.what());
  }
  std::shared_ptr<const MappedFile> mapping;
  out.tokens = MapArray(out.pack.tokens_path(), "the text's tokens", {std::nullopt, std::vector<int64_t>{}, "its pack"},
                        &mapping);
  if (out.tokens.dim() != 1 || out.tokens.size(0) != out.pack.tokens)
    throw DataError(
        fmt::format("the text pack '{}' is broken ({} tokens in tokens.npy, {} in vocab.json); delete "
                    "the folder to pack the text again",
                    out.pack.dir, out.tokens.numel(), out.pack.tokens));
  const spec::DataConfig common = spec::DataConfig::From(d);
  const bool shuffle = common.shuffle;
  mapping->Advise(shuffle ? MappedFile::Access::kRandom : MappedFile::Access::kSequential);

  out.split = spec::SplitTokens(out.pack.tokens, val_fraction);
  const auto& split = out.split;
  const std::string need =
      fmt::format("a sample takes seq_len + 1 = {} tokens (its targets are its inputs shifted by one)", seq_len + 1);
  int64_t train_blocks = spec::BlockCount(split.train, seq_len);
  if (train_blocks < 1)
    throw DataError(
        fmt::format("text: data.seq_len {} does not fit the training split of '{}': {} tokens; {}: lower "
                    "data.seq_len or give a longer text",
                    seq_len, path, split.train, need));
  if (d.contains("train_limit")) train_blocks = std::min(train_blocks, d["train_limit"].get<int64_t>());

  HostTensorsOptions& o = out.options;
  o.name = "text";
  std::tie(o.inputs, o.labels) = Blocks(out.tokens, 0, train_blocks, seq_len);
  if (val_fraction > 0) {
    const int64_t val_blocks = spec::BlockCount(split.val, seq_len);
    if (val_blocks < 1)
      throw DataError(
          fmt::format("text: data.seq_len {} does not fit the validation split of '{}': {} tokens; {}: "
                      "raise data.val_fraction, lower data.seq_len, or set data.val_fraction to 0",
                      seq_len, path, split.val, need));
    std::tie(o.eval_inputs, o.eval_labels) = Blocks(out.tokens, split.train, val_blocks, seq_len);
  }
  o.input_dtype = c10::kLong;
  o.num_classes = out.pack.vocab_size;
  o.batch_size = common.batch_size;
  o.shuffle = shuffle;
  o.seed = seed;
  o.device = device;
  return out;
}

std::vector<std::pair<std::string, std::string>> TextSource::Facts() const {
  std::vector<std::pair<std::string, std::string>> facts{
      {"data.pack", pack_.dir},
      {"data.tokenizer", TokenizerName(pack_.tokenizer)},
      {"data.vocab_size", std::to_string(pack_.vocab_size)},
      {"data.tokens", std::to_string(pack_.tokens)},
      {"data.train_tokens", std::to_string(split_.train)},
      {"data.val_tokens", std::to_string(split_.val)},
      {"data.train_blocks", std::to_string(train_blocks_)},
      {"data.val_blocks", std::to_string(val_blocks_)},
      {"data.unigram_loss", fmt::format("{:.4f}", UnigramLoss(tokens_, split_, pack_.vocab_size))}};
  if (pack_.tokenizer == Tokenizer::kChars) {
    nlohmann::json vocab = nlohmann::json::array();  // id -> its character
    for (int64_t id = 0; id < pack_.vocab_size; ++id)
      vocab.push_back(DecodeTokens(pack_, torch::tensor({id}, torch::kLong)));
    facts.emplace_back("data.vocab", vocab.dump());
  }
  return facts;
}

std::unique_ptr<DataSource> MakeText(const nlohmann::json& d, const c10::Device& device, uint64_t seed) {
  return std::make_unique<TextSource>(d, device, seed);
}

}  // namespace runx::data
