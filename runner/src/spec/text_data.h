#pragma once
// `data.source: text`: the files a text data path names, how they are read, and how their tokens
// split into training and validation blocks. No LibTorch here: the spec checks a text section with
// it before anything runs, and the data source (data/text.cc) reads and splits the same way.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace runx::spec {

/// What text data reads when the experiment does not say (data.tokenizer, data.val_fraction).
inline constexpr const char* kDefaultTokenizer = "bytes";
inline constexpr double kDefaultValFraction = 0.1;

/// A text data path cannot be used (missing, unreadable, a folder without text); the message
/// names the path.
class TextDataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One file of a text data set.
struct TextFile {
  std::string path;
  bool gzip = false;             ///< starts with the gzip magic: read decompressed
  std::optional<int64_t> bytes;  ///< the text's size; unknown for gzip (its trailer is the size mod 2^32)
};

/// The files `path` names: the file itself (any content), or a folder's regular files, sorted by
/// name, not descending into subfolders, each file once (a symbolic link to a file already taken is
/// skipped: fortunes has `x.u8 -> x`), binary files left out (a NUL byte in the first 8 KiB of the
/// text, the rule git and grep use; fortunes' `.dat` indexes). Throws TextDataError when `path` does
/// not exist, cannot be read, or is a folder without text files.
std::vector<TextFile> ListTextFiles(const std::string& path);

/// The sum of the files' sizes; nullopt when one is unknown (gzip).
std::optional<int64_t> TotalBytes(const std::vector<TextFile>& files);

/// Calls `chunk` with the text of `file` (decompressed), in order, in pieces of up to 1 MiB.
/// Throws TextDataError naming the file when it cannot be read.
void ReadText(const TextFile& file, const std::function<void(const char* data, size_t size)>& chunk);

/// The tokens of a text, split: the last floor(tokens * val_fraction) are held out for validation,
/// the rest, from the start, are for training.
struct TokenSplit {
  int64_t train = 0;
  int64_t val = 0;
};
TokenSplit SplitTokens(int64_t tokens, double val_fraction);

/// How many blocks of `seq_len` inputs a run of `tokens` tokens holds: a block's targets are its
/// inputs shifted by one token, so it needs seq_len + 1 tokens, and blocks follow each other every
/// `seq_len` tokens: (tokens - 1) / seq_len.
int64_t BlockCount(int64_t tokens, int64_t seq_len);

}  // namespace runx::spec
