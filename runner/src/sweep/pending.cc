#include "sweep/pending.h"

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "base/files.h"
#include "outcome/record_json.h"

namespace runx::engine {

std::string PendingDir(const std::string& db_path) { return db_path + ".pending"; }

std::string KeepPending(const std::string& db_path, const store::TrialRecord& rec) {
  namespace fs = std::filesystem;
  const fs::path dir = PendingDir(db_path);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path file =
      dir / fmt::format("run{}-order{}-repeat{}-{}.json", rec.run_id, rec.order_index, rec.repeat_index, getpid());
  std::string error =
      ec ? fmt::format("cannot create '{}': {}", dir.string(), ec.message())
         : base::WriteFileAtomically(file.string(),
                                     ToJson(rec).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (!error.empty())
    return fmt::format("the trial's record could not be kept either ({}): the next run measures it again", error);
  return fmt::format("the trial's record is kept in '{}' and written by the next run", file.string());
}

size_t RecordPending(store::Store& store, SweepObserver& observer) {
  namespace fs = std::filesystem;
  std::error_code ec;
  size_t n = 0;
  for (fs::directory_iterator it(PendingDir(store.path()), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".json") continue;
    const auto j = nlohmann::json::parse(base::ReadFile(it->path().string()).value_or(""), nullptr, false);
    if (j.is_discarded()) {
      observer.Warning(fmt::format("'{}' is not a trial record; left as it is", it->path().string()));
      continue;
    }
    store.RecordTrial(RecordFromJson(j));
    fs::remove(it->path());
    ++n;
  }
  return n;
}

}  // namespace runx::engine
