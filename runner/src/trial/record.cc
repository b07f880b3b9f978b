#include "trial/record.h"

#include <new>

#include <fmt/format.h>

#include "base/text.h"
#include "models/models.h"
#include "outcome/failure.h"
#include "trial/environment.h"

namespace runx::engine {

store::TrialRecord StartRecord() {
  store::TrialRecord rec;
  rec.started_at = UtcNow();
  rec.status = TrialStatus::kOk;
  return rec;
}

void RecordFailure(std::exception_ptr error, const RunnerContext& ctx, store::TrialRecord& rec) {
  try {
    std::rethrow_exception(error);
  } catch (const TrialAborted&) {
    rec.status = *ctx.abort_status();
    rec.error = ctx.abort_why();
  } catch (const models::IncompatibleModel& e) {  // this build or device cannot run the model
    rec.status = TrialStatus::kIncompatible;
    rec.error_detail = e.what();
  } catch (const data::DataError& e) {
    rec.status = TrialStatus::kFailed;
    rec.error_detail = e.what();
  } catch (const std::bad_alloc&) {
    rec.status = TrialStatus::kOom;
    rec.error = std::string(kHostOutOfMemory);
  } catch (const std::exception& e) {  // c10::Error, TechniqueFailure and friends: a failed trial, not a crash
    if (ctx.aborted()) {               // a technique said what this failure means before throwing it
      rec.status = *ctx.abort_status();
      rec.error = ctx.abort_why();
      rec.error_detail = ctx.abort_why() + "\n" + e.what();
      return;
    }
    rec.status = FailureStatus(e.what());
    rec.error_detail = e.what();
  }
}

void FinishRecord(store::TrialRecord& rec, const std::vector<std::string>& notes) {
  // The store keeps the first line as the error and the whole text beside it (a TorchScript
  // failure's first line says only that the interpreter failed; the reason comes after).
  if (!rec.error_detail.empty() && rec.error.empty()) rec.error = base::FirstLine(rec.error_detail);
  if (rec.error.find('\n') != std::string::npos) {
    rec.error_detail = rec.error;
    rec.error = base::FirstLine(rec.error);
  }
  for (size_t i = 0; i < notes.size(); ++i) rec.environment[fmt::format("note.{:02}", i)] = notes[i];
  rec.finished_at = UtcNow();
}

}  // namespace runx::engine
