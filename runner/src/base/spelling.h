#pragma once
// The speller behind every "did you mean": config keys and values (spec/), commands, options,
// option values and experiment names (cli/).
#include <cstddef>
#include <string>
#include <vector>

namespace runx::base {

/// Optimal string alignment distance: insertions, deletions, replacements and adjacent
/// transpositions each cost 1.
size_t EditDistance(const std::string& a, const std::string& b);

/// The closest of `candidates` to `word` by edit distance (case-insensitive), or "" when none is
/// close enough: at most 1 edit for words under 6 characters, then one per 3 characters, at most
/// 3 (like ninja's SpellcheckString).
std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates);

/// For names typed on a command line: the one candidate `word` is a prefix of (at least 2
/// characters: 'hist' -> 'history'), else DidYouMean.
std::string SuggestName(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace runx::base
