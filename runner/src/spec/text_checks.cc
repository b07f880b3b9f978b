// The rules of text data and the gpt model that the schema cannot express: the files of
// data.path, seq_len against the length of the text, gpt's sizes against each other and the text's.
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "spec/checks.h"
#include "spec/text_data.h"

namespace runx::spec {

extern const char* const kEmbeddedExperimentSchema;

namespace {

/// The files of a text path or why they cannot be read. Listed once per path and process: a sweep
/// checks its rules once per variant, and the files do not change while runx checks a file.
struct Listing {
  std::vector<TextFile> files;
  std::string error;
};

const Listing& ListOnce(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, Listing> listings;
  std::lock_guard<std::mutex> lock(mu);
  auto it = listings.find(path);
  if (it != listings.end()) return it->second;
  Listing l;
  try {
    l.files = ListTextFiles(path);
  } catch (const TextDataError& e) {
    l.error = e.what();
  }
  return listings.emplace(path, std::move(l)).first->second;
}

/// The schema's default of model key `key` (the one place defaults are written).
json ModelDefault(const char* key) {
  static const json schema = json::parse(kEmbeddedExperimentSchema);
  return schema.at("properties").at("model").at("properties").at(key).value("default", json());
}

/// The integer at `key` of `section`, else `fallback` (also when it has the wrong type: the schema
/// says so).
int64_t IntOr(const json& section, const char* key, const json& fallback) {
  const json v = section.value(key, fallback);
  return v.is_number_integer() ? v.get<int64_t>() : 0;
}

const char* const kTextExample = "e.g. path: /usr/share/games/fortunes ('apt-get install fortunes'), seq_len: 128";

/// seq_len against the tokens each split holds, when the text's size is known without reading it.
void CheckSeqLen(const json& data, const std::string& path, const std::vector<TextFile>& files,
                 std::vector<Issue>* issues) {
  const auto bytes = TotalBytes(files);
  const json seq = data.value("seq_len", json());
  const json fraction = data.value("val_fraction", json(kDefaultValFraction));
  if (!bytes || !seq.is_number_integer() || seq.get<int64_t>() < 1 || !fraction.is_number()) return;
  const int64_t seq_len = seq.get<int64_t>();
  const double val_fraction = fraction.get<double>();
  if (val_fraction < 0 || val_fraction >= 1) return;  // the schema says so
  const bool chars = data.value("tokenizer", json(kDefaultTokenizer)) == "chars";
  const TokenSplit split = SplitTokens(*bytes, val_fraction);
  const std::string at_most = chars ? "at most " : "";
  const std::string size =
      fmt::format("{} {} bytes{}",
                  files.size() > 1 ? fmt::format("the {} text files of {} hold", files.size(), Quote(path))
                                   : fmt::format("{} has", Quote(path)),
                  *bytes, chars ? " (a character is one or more of them)" : "");
  const std::string need =
      fmt::format("a sample takes seq_len + 1 = {} tokens (its targets are its inputs shifted by one)", seq_len + 1);
  if (BlockCount(split.train, seq_len) < 1) {
    issues->push_back({"/data/seq_len",
                       false,
                       fmt::format("'data.seq_len' {} does not fit the training split of {}: {}{} tokens", seq_len,
                                   Quote(path), at_most, split.train),
                       {fmt::format("{}; {}{}: lower data.seq_len or give a longer text", need, size,
                                    split.val > 0 ? fmt::format(", of which the last {} are held out for validation "
                                                                "(data.val_fraction {})",
                                                                split.val, val_fraction)
                                                  : "")}});
  } else if (val_fraction > 0 && BlockCount(split.val, seq_len) < 1) {
    issues->push_back({"/data/seq_len",
                       false,
                       fmt::format("'data.seq_len' {} does not fit the validation split of {}: {}{} tokens", seq_len,
                                   Quote(path), at_most, split.val),
                       {fmt::format("{}; the validation split is the last {} of the text's tokens "
                                    "(data.val_fraction): raise it, lower data.seq_len, or set it to 0 for no "
                                    "validation",
                                    need, val_fraction)}});
  }
}

}  // namespace

std::vector<Issue> CheckTextData(const json& doc) {
  std::vector<Issue> issues;
  const json& data = doc.at("data");
  const json path = data.value("path", json());
  if (!path.is_string()) return issues;
  const Listing& listing = ListOnce(path.get<std::string>());
  if (!listing.error.empty()) {
    issues.push_back(
        {"/data/path",
         false,
         listing.error,
         {fmt::format("text data reads a text file (plain or gzip) or a folder of them, {}", kTextExample)}});
    return issues;
  }
  CheckSeqLen(data, path.get<std::string>(), listing.files, &issues);
  return issues;
}

std::vector<Issue> CheckGpt(const json& doc) {
  std::vector<Issue> issues;
  const json model = doc.value("model", json()), data = doc.value("data", json());
  if (!model.is_object() || !data.is_object() || !data.value("source", json()).is_string())
    return issues;  // the schema says what is wrong
  if (model.contains("num_classes"))
    issues.push_back({"/model/num_classes",
                      true,
                      "'model.num_classes' is not used by model 'gpt'",
                      {"gpt's vocabulary is the text's: 256 tokens with data.tokenizer bytes, its distinct characters "
                       "with chars"}});
  const int64_t heads = IntOr(model, "n_head", ModelDefault("n_head"));
  const int64_t width = IntOr(model, "d_model", ModelDefault("d_model"));
  if (heads > 0 && width > 0 && width % heads != 0)
    issues.push_back({model.contains("d_model") ? "/model/d_model" : "/model/n_head",
                      false,
                      fmt::format("'model.d_model' {} is not a multiple of 'model.n_head' {}", width, heads),
                      {"each attention head takes d_model / n_head of the token vector's dimensions"}});
  const int64_t block = IntOr(model, "block_size", json()), seq_len = IntOr(data, "seq_len", json());
  if (block > 0 && seq_len > 0 && block < seq_len)
    issues.push_back({"/model/block_size",
                      false,
                      fmt::format("'model.block_size' {} is shorter than 'data.seq_len' {}", block, seq_len),
                      {"block_size is the longest context gpt reads (the rows of its position embedding); absent, "
                       "it is data.seq_len"}});
  return issues;
}

}  // namespace runx::spec
