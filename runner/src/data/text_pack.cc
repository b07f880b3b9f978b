#include "data/text_pack.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "data/data.h"
#include "data/npy.h"
#include "spec/identity.h"
#include "spec/spec.h"

namespace runx::data {
namespace {

namespace fs = std::filesystem;

constexpr int kPackFormat = 1;
constexpr char32_t kCodePoints = 0x110000;
constexpr size_t kIdChunk = size_t{1} << 20;

/// UTF-8 decoding of one file, fed in pieces; throws DataError at the first byte that is not UTF-8
/// (overlong forms and surrogates included), naming the file and the byte's offset.
class Utf8Decoder {
 public:
  explicit Utf8Decoder(std::string path) : path_(std::move(path)) {}

  template <typename Emit>
  void Feed(const char* data, size_t size, Emit&& emit) {
    for (size_t i = 0; i < size; ++i, ++offset_) {
      const auto b = static_cast<unsigned char>(data[i]);
      if (need_ == 0) {
        start_ = offset_;
        if (b < 0x80) {
          emit(static_cast<char32_t>(b));
        } else if (b >= 0xC2 && b <= 0xDF) {
          Begin(b, b & 0x1F, 1, 0x80);
        } else if (b >= 0xE0 && b <= 0xEF) {
          Begin(b, b & 0x0F, 2, 0x800);
        } else if (b >= 0xF0 && b <= 0xF4) {
          Begin(b, b & 0x07, 3, 0x10000);
        } else {
          Fail(b, offset_);
        }
        continue;
      }
      if ((b & 0xC0) != 0x80) Fail(lead_, start_);  // a character cut short: name where it began
      cp_ = (cp_ << 6) | (b & 0x3F);
      if (--need_ > 0) continue;
      if (cp_ < min_ || cp_ >= kCodePoints || (cp_ >= 0xD800 && cp_ <= 0xDFFF)) Fail(lead_, start_);
      emit(cp_);
    }
  }
  /// The end of the file: it must not end inside a character.
  void Finish() const {
    if (need_ > 0)
      throw DataError(
          fmt::format("'{}' is not UTF-8 text: it ends inside a character (from byte {}); read it with "
                      "data.tokenizer: bytes",
                      path_, start_));
  }

 private:
  void Begin(unsigned lead, char32_t bits, int need, char32_t min) {
    lead_ = lead;
    cp_ = bits;
    need_ = need;
    min_ = min;
  }
  [[noreturn]] void Fail(unsigned byte, int64_t at) const {
    throw DataError(
        fmt::format("'{}' is not UTF-8 text: byte 0x{:02x} at offset {}; read it with data.tokenizer: "
                    "bytes",
                    path_, byte, at));
  }
  std::string path_;
  int64_t offset_ = 0, start_ = 0;
  char32_t cp_ = 0, min_ = 0;
  unsigned lead_ = 0;
  int need_ = 0;
};

std::string Utf8(char32_t c) {
  std::string s;
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
  return s;
}

/// Calls `emit` with every character of `files` in order.
template <typename Emit>
void ForEachChar(const std::vector<spec::TextFile>& files, Emit&& emit) {
  for (const auto& f : files) {
    Utf8Decoder decoder(f.path);
    spec::ReadText(f, [&](const char* p, size_t n) { decoder.Feed(p, n, emit); });
    decoder.Finish();
  }
}

/// Reads a whole text file written by this code; throws DataError.
std::string ReadAll(const std::string& path) {
  std::string error;
  auto text = base::ReadFile(path, &error);
  if (!text) throw DataError(fmt::format("cannot read '{}': {}", path, error));
  return std::move(*text);
}

/// Writes `text` to `path` through a temporary file renamed over it.
void WriteAtomically(const std::string& path, const std::string& text) {
  const std::string temp = fmt::format("{}.tmp-{}", path, ::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::remove(temp.c_str());
      throw DataError(fmt::format("cannot write '{}': {}", temp, std::strerror(errno)));
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(temp.c_str());
    throw DataError(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
  }
}

c10::ScalarType IdDtype(int64_t vocab) {
  if (vocab <= 256) return c10::ScalarType::Byte;
  if (vocab <= 32768) return c10::ScalarType::Short;
  return c10::ScalarType::Int;
}

/// Buffers token ids and appends them to `writer` in `dtype`.
class IdWriter {
 public:
  IdWriter(NpyWriter& writer, c10::ScalarType dtype) : writer_(writer), dtype_(dtype) { ids_.reserve(kIdChunk); }
  void Add(int32_t id) {
    ids_.push_back(id);
    if (ids_.size() == kIdChunk) Flush();
  }
  void Flush() {
    if (ids_.empty()) return;
    const auto t = torch::from_blob(ids_.data(), {static_cast<int64_t>(ids_.size())}, torch::kInt).to(dtype_);
    writer_.Append(t.data_ptr(), static_cast<size_t>(t.numel()) * t.element_size());
    ids_.clear();
  }

 private:
  NpyWriter& writer_;
  c10::ScalarType dtype_;
  std::vector<int32_t> ids_;
};

}  // namespace

Tokenizer TokenizerFromName(const std::string& name) {
  if (name == "bytes") return Tokenizer::kBytes;
  if (name == "chars") return Tokenizer::kChars;
  throw DataError(fmt::format("unknown tokenizer '{}'; expected 'bytes' or 'chars'", name));
}

std::string TokenizerName(Tokenizer t) { return t == Tokenizer::kBytes ? "bytes" : "chars"; }

TextPack PackText(const std::vector<spec::TextFile>& files, Tokenizer tokenizer, const std::string& dir) {
  TextPack pack;
  pack.dir = dir;
  if (::access(pack.tokens_path().c_str(), F_OK) == 0) return ReadTextPack(dir);  // complete: written last
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw DataError(fmt::format("cannot create the text pack folder '{}': {}", dir, ec.message()));

  // Pass 1: how many tokens, and (chars) which characters.
  int64_t count = 0;
  std::vector<int32_t> id_of;  // chars: code point -> id, -1 where absent
  if (tokenizer == Tokenizer::kBytes) {
    for (const auto& f : files) spec::ReadText(f, [&](const char*, size_t n) { count += static_cast<int64_t>(n); });
    pack.vocab_size = 256;
  } else {
    id_of.assign(kCodePoints, -1);
    ForEachChar(files, [&](char32_t c) {
      id_of[c] = 0;
      ++count;
    });
    for (char32_t c = 0; c < kCodePoints; ++c) {
      if (id_of[c] < 0) continue;
      id_of[c] = static_cast<int32_t>(pack.chars.size());
      pack.chars.push_back(c);
    }
    pack.vocab_size = static_cast<int64_t>(pack.chars.size());
  }
  if (count == 0)
    throw DataError(fmt::format("there is no text in {}",
                                files.size() == 1
                                    ? fmt::format("'{}'", files[0].path)
                                    : fmt::format("the {} files from '{}' on", files.size(), files[0].path)));
  pack.tokenizer = tokenizer;
  pack.tokens = count;

  nlohmann::json vocab{{"format", kPackFormat},
                       {"tokenizer", TokenizerName(tokenizer)},
                       {"vocab_size", pack.vocab_size},
                       {"tokens", count},
                       {"files", nlohmann::json::array()}};
  for (const auto& f : files) vocab["files"].push_back(f.path);
  if (tokenizer == Tokenizer::kChars) {
    vocab["vocab"] = nlohmann::json::array();  // id -> its character
    for (char32_t c : pack.chars) vocab["vocab"].push_back(Utf8(c));
  }
  WriteAtomically(dir + "/vocab.json", vocab.dump(1) + "\n");

  // Pass 2: the ids.
  const auto dtype = IdDtype(pack.vocab_size);
  NpyWriter writer(pack.tokens_path(), dtype, {count});
  if (tokenizer == Tokenizer::kBytes) {
    for (const auto& f : files) spec::ReadText(f, [&](const char* p, size_t n) { writer.Append(p, n); });
  } else {
    IdWriter ids(writer, dtype);
    ForEachChar(files, [&](char32_t c) {
      const int32_t id = id_of[c];
      if (id < 0) throw DataError(fmt::format("the text changed while it was packed into '{}'", dir));
      ids.Add(id);
    });
    ids.Flush();
  }
  writer.Commit();
  return pack;
}

TextPack ReadTextPack(const std::string& dir) {
  const std::string path = dir + "/vocab.json";
  nlohmann::json v;
  try {
    v = nlohmann::json::parse(ReadAll(path));
  } catch (const nlohmann::json::exception& e) {
    throw DataError(fmt::format("'{}' is not a text pack's vocabulary: {}", path, e.what()));
  }
  TextPack pack;
  pack.dir = dir;
  try {
    if (v.at("format").get<int>() != kPackFormat)
      throw DataError(fmt::format("'{}' is text pack format {}, this runx reads format {}; delete the folder", path,
                                  v.at("format").get<int>(), kPackFormat));
    pack.tokenizer = TokenizerFromName(v.at("tokenizer").get<std::string>());
    pack.vocab_size = v.at("vocab_size").get<int64_t>();
    pack.tokens = v.at("tokens").get<int64_t>();
    if (pack.tokenizer == Tokenizer::kChars) {
      for (const auto& s : v.at("vocab")) {
        std::vector<char32_t> one;
        Utf8Decoder decoder(path);
        const std::string text = s.get<std::string>();
        decoder.Feed(text.data(), text.size(), [&](char32_t c) { one.push_back(c); });
        if (one.size() != 1)
          throw DataError(fmt::format("'{}': vocabulary entry '{}' is not one character", path, text));
        pack.chars.push_back(one[0]);
      }
      if (static_cast<int64_t>(pack.chars.size()) != pack.vocab_size)
        throw DataError(
            fmt::format("'{}' lists {} characters for vocab_size {}", path, pack.chars.size(), pack.vocab_size));
    }
  } catch (const nlohmann::json::exception& e) {
    throw DataError(fmt::format("'{}' is not a text pack's vocabulary: {}", path, e.what()));
  }
  return pack;
}

std::string TextPackDir(const std::string& root, const std::vector<spec::TextFile>& files, Tokenizer tokenizer) {
  std::string key = fmt::format("runx text pack {}\n{}\n", kPackFormat, TokenizerName(tokenizer));
  try {
    for (const auto& f : files) key += spec::Sha256OfFile(f.path) + "\n";
  } catch (const std::runtime_error& e) {
    throw DataError(e.what());
  }
  return fmt::format("{}/{}-{}", root, TokenizerName(tokenizer), spec::Sha256Hex(key).substr(0, 16));
}

std::string TextCacheRoot() {
  const auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
  };
  std::string root = env("RUNX_CACHE_DIR");
  if (root.empty() && !env("XDG_CACHE_HOME").empty()) root = env("XDG_CACHE_HOME") + "/runx";
  if (root.empty() && !env("HOME").empty()) root = env("HOME") + "/.cache/runx";
  if (root.empty())
    throw DataError("text data packs its tokens into a cache folder, and none is known: set RUNX_CACHE_DIR");
  return root + "/text";
}

std::string DecodeTokens(const TextPack& pack, const torch::Tensor& ids) {
  const auto all = ids.to(torch::kLong).contiguous();
  const auto* p = all.data_ptr<int64_t>();
  std::string text;
  for (int64_t i = 0, n = all.numel(); i < n; ++i) {
    if (p[i] < 0 || p[i] >= pack.vocab_size)
      throw DataError(fmt::format("token id {} is outside the vocabulary of {}", p[i], pack.vocab_size));
    if (pack.tokenizer == Tokenizer::kBytes) {
      text += static_cast<char>(p[i]);
    } else {
      text += Utf8(pack.chars[static_cast<size_t>(p[i])]);
    }
  }
  return text;
}

}  // namespace runx::data
