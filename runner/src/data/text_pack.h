#pragma once
// The token file of text data: a text (spec::ListTextFiles' files, read in order) tokenized once
// into tokens.npy, a 1-D array of token ids in the smallest integer dtype that holds the
// vocabulary, and vocab.json, the tokenizer and (for chars) the character of each id. The text
// source maps tokens.npy (MapArray) instead of reading the text again.
#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>

#include "spec/text_data.h"

namespace runx::data {

enum class Tokenizer {
  kBytes,  ///< one token per byte: ids 0..255
  kChars,  ///< one token per UTF-8 character: ids 0..V-1 over the text's distinct characters, by code point
};

/// "bytes" or "chars" (data.tokenizer); throws DataError for another name.
Tokenizer TokenizerFromName(const std::string& name);
std::string TokenizerName(Tokenizer t);

/// A packed text: what vocab.json says, and where tokens.npy is.
struct TextPack {
  std::string dir;
  Tokenizer tokenizer = Tokenizer::kBytes;
  int64_t vocab_size = 0;
  std::vector<char32_t> chars;  ///< chars: the character (code point) of each id, ascending
  int64_t tokens = 0;
  std::string tokens_path() const { return dir + "/tokens.npy"; }
};

/// Tokenizes `files` into `dir` (created): vocab.json, then tokens.npy, each written to a
/// temporary name and renamed, so a pack whose tokens.npy exists is complete (and processes that
/// pack the same text at once each write a whole file). A complete pack in `dir` is read, not
/// written again. Throws DataError: a file that cannot be read, a text that is not UTF-8 (chars),
/// an empty text.
TextPack PackText(const std::vector<spec::TextFile>& files, Tokenizer tokenizer, const std::string& dir);

/// Reads the vocab.json of the pack in `dir`; throws DataError when it is missing or broken.
TextPack ReadTextPack(const std::string& dir);

/// The folder of the pack of `files` tokenized by `tokenizer` under `root`: named by the tokenizer
/// and a sha256 of the pack format and the files' content in order (not their names: the same
/// text elsewhere reuses its pack, a file edited in place gets a new one).
std::string TextPackDir(const std::string& root, const std::vector<spec::TextFile>& files, Tokenizer tokenizer);

/// Where packs are kept: $RUNX_CACHE_DIR, else $XDG_CACHE_HOME/runx, else $HOME/.cache/runx; then
/// "/text". Throws DataError when none of them is set.
std::string TextCacheRoot();

/// The text of token ids `ids` (1-D integers) under `pack`'s vocabulary, UTF-8 for chars.
std::string DecodeTokens(const TextPack& pack, const torch::Tensor& ids);

}  // namespace runx::data
