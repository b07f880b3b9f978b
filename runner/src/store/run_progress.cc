#include "store/run_progress.h"

#include <fmt/format.h>

#include "store/query.h"

namespace runx::store {
namespace {

std::string Literal(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

int64_t Int(const Value& v) { return std::holds_alternative<int64_t>(v) ? std::get<int64_t>(v) : 0; }
std::string Text(const Value& v) { return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : ""; }

}  // namespace

std::optional<RunProgress> FindRunProgress(const std::string& path, const std::string& command_part) {
  const auto r =
      QueryReadOnly(path, fmt::format("SELECT run_id, status, host, trials, ok_trials, reused_trials FROM run_summary "
                                      "WHERE instr(command, {}) > 0 ORDER BY run_id DESC LIMIT 1",
                                      Literal(command_part)));
  if (r.rows.empty()) return std::nullopt;
  const auto& row = r.rows[0];
  return RunProgress{Int(row[0]), Text(row[1]), Text(row[2]), Int(row[3]), Int(row[4]), Int(row[5])};
}

}  // namespace runx::store
