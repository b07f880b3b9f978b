// The speller behind every did-you-mean (base/spelling.h).
#include <algorithm>
#include <cctype>

#include "base/spelling.h"

namespace runx::base {
namespace {

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

size_t EditDistance(const std::string& a, const std::string& b) {
  // Optimal string alignment: insertions, deletions, replacements and adjacent transpositions.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates) {
  constexpr size_t kMaxDistance = 3;
  constexpr size_t kMaxWordLength = 256;  // nothing useful is that long; keeps the cost bounded
  if (word.empty() || word.size() > kMaxWordLength) return "";
  // Short words tolerate fewer edits: 'gpu' may be 'cpu', but 'ab' is not 'xy'.
  const size_t limit = std::max<size_t>(1, std::min(kMaxDistance, word.size() / 3));
  const std::string lower = Lower(word);
  std::string best;
  size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    if (candidate == word || candidate.size() > kMaxWordLength) continue;
    const size_t distance = EditDistance(lower, Lower(candidate));
    if (distance < best_distance && distance < word.size()) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string SuggestName(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.size() >= 2) {
    std::string only;
    int prefixed = 0;
    for (const auto& c : candidates)
      if (c.size() > word.size() && c.compare(0, word.size(), word) == 0) {
        only = c;
        ++prefixed;
      }
    if (prefixed == 1) return only;
  }
  return DidYouMean(word, candidates);
}

}  // namespace runx::base
