#include "data/npy.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include "base/cleanup.h"
#include "data/data.h"

namespace runx::data {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kMaxHeaderBytes = 1 << 20;  ///< NumPy's own limit is 10000 since 1.24
constexpr int kMaxNesting = 8;

struct DtypeInfo {
  const char* name;
  const char* descr;  ///< nullptr: NumPy has no such dtype
  c10::ScalarType type;
};

constexpr std::array<DtypeInfo, 10> kDtypes{{
    {"uint8", "|u1", c10::ScalarType::Byte},
    {"int8", "|i1", c10::ScalarType::Char},
    {"bool", "|b1", c10::ScalarType::Bool},
    {"int16", "<i2", c10::ScalarType::Short},
    {"int32", "<i4", c10::ScalarType::Int},
    {"int64", "<i8", c10::ScalarType::Long},
    {"float16", "<f2", c10::ScalarType::Half},
    {"bfloat16", nullptr, c10::ScalarType::BFloat16},
    {"float32", "<f4", c10::ScalarType::Float},
    {"float64", "<f8", c10::ScalarType::Double},
}};

/// A Python literal as NumPy writes it in a header: a dict of str keys; values are strings,
/// True/False/None, integers, tuples or lists (of those) and dicts. Parsed into JSON.
class LiteralParser {
 public:
  LiteralParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}
  nlohmann::json ParseAll() {
    nlohmann::json v = Value(0);
    Space();
    if (i_ != s_.size()) Fail("unexpected text after the dict");
    return v;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw DataError(fmt::format("'{}' has a bad .npy header: {} at offset {} of \"{}\"", path_, what, i_,
                                std::string(s_.substr(0, std::min<size_t>(s_.size(), 120)))));
  }
  void Space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool Eat(char c) {
    Space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  nlohmann::json Value(int depth) {
    if (depth > kMaxNesting) Fail("nesting too deep");
    Space();
    if (i_ >= s_.size()) Fail("unexpected end");
    const char c = s_[i_];
    if (c == '{') return Dict(depth);
    if (c == '(' || c == '[') return Sequence(depth, c == '(' ? ')' : ']');
    if (c == '\'' || c == '"') return String();
    if (c == '-' || (c >= '0' && c <= '9')) return Integer();
    for (const auto& [word, value] :
         {std::pair<const char*, nlohmann::json>{"True", true}, {"False", false}, {"None", nullptr}}) {
      const size_t n = std::strlen(word);
      if (s_.substr(i_, n) == word) {
        i_ += n;
        return value;
      }
    }
    Fail(fmt::format("unexpected '{}'", c));
  }
  nlohmann::json Dict(int depth) {
    ++i_;
    nlohmann::json d = nlohmann::json::object();
    while (!Eat('}')) {
      Space();
      const nlohmann::json key = String();
      if (!Eat(':')) Fail("expected ':'");
      d[key.get<std::string>()] = Value(depth + 1);
      if (!Eat(',')) {
        if (!Eat('}')) Fail("expected ',' or '}'");
        break;
      }
    }
    return d;
  }
  nlohmann::json Sequence(int depth, char close) {
    ++i_;
    nlohmann::json a = nlohmann::json::array();
    while (!Eat(close)) {
      a.push_back(Value(depth + 1));
      if (!Eat(',')) {
        if (!Eat(close)) Fail(fmt::format("expected ',' or '{}'", close));
        break;
      }
    }
    return a;
  }
  nlohmann::json String() {
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) Fail("expected a quoted string");
    const char quote = s_[i_++];
    const size_t end = s_.find(quote, i_);
    if (end == std::string_view::npos) Fail("unterminated string");
    std::string out(s_.substr(i_, end - i_));
    i_ = end + 1;
    return out;
  }
  nlohmann::json Integer() {
    const size_t start = i_;
    if (s_[i_] == '-') ++i_;
    int64_t v = 0;
    if (i_ >= s_.size() || s_[i_] < '0' || s_[i_] > '9') Fail("expected a digit");
    for (; i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9'; ++i_) {
      if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) Fail("integer too large");
      v = v * 10 + (s_[i_] - '0');
    }
    if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 long
    return s_[start] == '-' ? -v : v;
  }
  std::string_view s_;
  const std::string& path_;
  size_t i_ = 0;
};

c10::ScalarType DtypeFromDescr(const std::string& descr, const std::string& path) {
  if (descr.size() < 2) throw DataError(fmt::format("'{}' has an unknown dtype '{}'", path, descr));
  const char order = descr[0];
  const std::string code = descr.substr(1);
  const bool single_byte = code.size() == 2 && code[1] == '1';
  if (order == '>' && !single_byte)
    throw DataError(
        fmt::format("'{}' holds big-endian data ('{}'); runx reads little-endian only: convert it "
                    "with a.astype(a.dtype.newbyteorder('<'))",
                    path, descr));
  if (order != '<' && order != '|' && order != '=' && order != '>')
    throw DataError(fmt::format("'{}' has an unknown dtype '{}'", path, descr));
  for (const auto& d : kDtypes)
    if (d.descr && code == d.descr + 1) return d.type;
  std::vector<std::string> known;
  for (const auto& d : kDtypes)
    if (d.descr) known.push_back(fmt::format("'{}' ({})", d.descr, d.name));
  throw DataError(fmt::format("'{}' has dtype '{}', which runx cannot read; expected one of {}", path, descr,
                              fmt::join(known, ", ")));
}

uint32_t ReadLittle(const unsigned char* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

int64_t NpyHeader::data_bytes() const {
  int64_t n = static_cast<int64_t>(c10::elementSize(dtype));
  for (auto d : shape) n *= d;
  return n;
}

bool IsNpy(const void* bytes, size_t size) { return size >= kMagicSize && std::memcmp(bytes, kMagic, kMagicSize) == 0; }

NpyHeader ParseNpyHeader(const void* bytes, size_t size, const std::string& path) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  if (!IsNpy(bytes, size)) throw DataError(fmt::format("'{}' is not a .npy file (no \\x93NUMPY magic)", path));
  if (size < 10) throw DataError(fmt::format("'{}' is truncated inside its .npy header", path));
  const int major = p[6];
  if (major < 1 || major > 3)
    throw DataError(fmt::format("'{}' is a .npy file of version {}.{}; runx reads versions 1 to 3", path, major, p[7]));
  const size_t prefix = major == 1 ? 10 : 12;
  if (size < prefix) throw DataError(fmt::format("'{}' is truncated inside its .npy header", path));
  const size_t header_len = ReadLittle(p + 8, major == 1 ? 2 : 4);
  if (header_len > kMaxHeaderBytes)
    throw DataError(
        fmt::format("'{}' declares a .npy header of {} bytes; at most {}", path, header_len, kMaxHeaderBytes));
  if (size < prefix + header_len) throw DataError(fmt::format("'{}' is truncated inside its .npy header", path));
  const std::string_view text(reinterpret_cast<const char*>(p + prefix), header_len);
  const nlohmann::json dict = LiteralParser(text, path).ParseAll();
  if (!dict.is_object()) throw DataError(fmt::format("'{}' has a bad .npy header: not a dict", path));
  for (const char* key : {"descr", "fortran_order", "shape"})
    if (!dict.contains(key)) throw DataError(fmt::format("'{}' has a bad .npy header: no '{}'", path, key));
  const auto& descr = dict["descr"];
  if (!descr.is_string())
    throw DataError(
        fmt::format("'{}' holds a structured dtype {}; runx reads plain arrays of one dtype", path, descr.dump()));
  NpyHeader h;
  h.dtype = DtypeFromDescr(descr.get<std::string>(), path);
  if (!dict["shape"].is_array())
    throw DataError(fmt::format("'{}' has a bad .npy header: 'shape' is not a tuple", path));
  for (const auto& d : dict["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      throw DataError(fmt::format("'{}' has a bad .npy header: shape {}", path, dict["shape"].dump()));
    h.shape.push_back(d.get<int64_t>());
  }
  if (!dict["fortran_order"].is_boolean())
    throw DataError(fmt::format("'{}' has a bad .npy header: 'fortran_order' is not True or False", path));
  const bool matters = std::count_if(h.shape.begin(), h.shape.end(), [](int64_t d) { return d > 1; }) > 1;
  if (dict["fortran_order"].get<bool>() && matters)
    throw DataError(
        fmt::format("'{}' is stored in Fortran (column-major) order; runx reads C order: save "
                    "numpy.ascontiguousarray(a) instead",
                    path));
  h.data_offset = static_cast<int64_t>(prefix + header_len);
  return h;
}

std::string NpyHeaderBytes(c10::ScalarType dtype, const std::vector<int64_t>& shape) {
  std::string tuple = "(";
  for (size_t i = 0; i < shape.size(); ++i) tuple += fmt::format("{}{}", i ? ", " : "", shape[i]);
  tuple += shape.size() == 1 ? ",)" : ")";
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", NpyDescr(dtype), tuple);
  const bool v2 = dict.size() + 11 > 65535;
  const size_t prefix = v2 ? 12 : 10;
  dict.append((64 - (prefix + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  const size_t n = dict.size();
  for (size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out + dict;
}

NpyWriter::NpyWriter(std::string path, c10::ScalarType dtype, std::vector<int64_t> shape)
    : path_(std::move(path)),
      temp_(fmt::format("{}.tmp-{}", path_, ::getpid())),
      remove_on_signal_(std::make_unique<base::RemoveOnSignal>(temp_)) {
  NpyHeader h;
  h.dtype = dtype;
  h.shape = shape;
  expected_ = h.data_bytes();
  const std::string header = NpyHeaderBytes(dtype, shape);
  file_ = std::fopen(temp_.c_str(), "wb");
  if (!file_ || std::fwrite(header.data(), 1, header.size(), file_) != header.size()) {
    const int err = errno;
    if (file_) std::fclose(file_);
    file_ = nullptr;
    std::remove(temp_.c_str());
    throw DataError(fmt::format("cannot write '{}': {}", temp_, std::strerror(err)));
  }
}

NpyWriter::~NpyWriter() {
  if (file_) {
    std::fclose(file_);
    std::remove(temp_.c_str());
  }
}

void NpyWriter::Append(const void* bytes, size_t size) {
  if (size && std::fwrite(bytes, 1, size, file_) != size)
    throw DataError(fmt::format("cannot write '{}': {}", temp_, std::strerror(errno)));
  written_ += static_cast<int64_t>(size);
}

void NpyWriter::Commit() {
  if (written_ != expected_)
    throw DataError(fmt::format("'{}': wrote {} bytes of data, the header says {}", path_, written_, expected_));
  const bool ok = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const int err = errno;
  std::fclose(file_);
  file_ = nullptr;
  if (!ok || std::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int why = ok ? errno : err;
    std::remove(temp_.c_str());
    throw DataError(fmt::format("cannot write '{}': {}", path_, std::strerror(why)));
  }
}

torch::Tensor LoadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  std::string head(kMaxHeaderBytes + 12, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const NpyHeader h = ParseNpyHeader(head.data(), head.size(), path);
  auto t = torch::empty(h.shape, torch::TensorOptions().dtype(h.dtype));
  in.clear();
  in.seekg(h.data_offset);
  in.read(static_cast<char*>(t.data_ptr()), h.data_bytes());
  if (in.gcount() != h.data_bytes())
    throw DataError(fmt::format("'{}' is truncated: its header says {} bytes of data, it holds {}", path,
                                h.data_bytes(), in.gcount()));
  return t;
}

void SaveNpy(const std::string& path, const torch::Tensor& t) {
  const auto c = t.to(torch::kCPU).contiguous();
  NpyWriter w(path, c.scalar_type(), c.sizes().vec());
  w.Append(c.data_ptr(), static_cast<size_t>(c.numel()) * c.element_size());
  w.Commit();
}

c10::ScalarType DtypeFromName(const std::string& name) {
  for (const auto& d : kDtypes)
    if (name == d.name) return d.type;
  std::vector<std::string> known;
  for (const auto& d : kDtypes) known.push_back(fmt::format("'{}'", d.name));
  throw DataError(fmt::format("unknown dtype '{}'; expected one of {}", name, fmt::join(known, ", ")));
}

std::string DtypeName(c10::ScalarType dtype) {
  for (const auto& d : kDtypes)
    if (d.type == dtype) return d.name;
  return c10::toString(dtype);
}

std::string NpyDescr(c10::ScalarType dtype) {
  for (const auto& d : kDtypes)
    if (d.type == dtype && d.descr) return d.descr;
  throw DataError(fmt::format("NumPy has no dtype for {}; convert the tensor first", DtypeName(dtype)));
}

}  // namespace runx::data
