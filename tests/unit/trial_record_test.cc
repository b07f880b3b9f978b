// The record of a trial: its start, the failures written into it, its finish.
#include "trial/record.h"

#include <new>

#include <gtest/gtest.h>

#include "trial_support.h"

namespace runx::engine {
namespace {

using testing::TrialHarness;

template <typename E>
store::TrialRecord Failed(E error, TrialHarness& h) {
  store::TrialRecord rec;
  RecordFailure(std::make_exception_ptr(error), h.ctx, rec);
  return rec;
}

TEST(TrialRecord, StartsOk) {
  const auto rec = StartRecord();
  EXPECT_EQ(Name(rec.status), "ok");
  EXPECT_EQ(rec.label, "");  // the run's fields are the parent's (sweep/record.h RecordInRun)
  EXPECT_EQ(rec.config_json, "");
  EXPECT_FALSE(rec.started_at.empty());
}

TEST(TrialRecord, FailuresByKind) {
  TrialHarness h;
  auto r = Failed(std::bad_alloc(), h);
  EXPECT_EQ(Name(r.status), "oom");
  EXPECT_EQ(r.error, "out of host memory (std::bad_alloc)");
  EXPECT_EQ(r.error_detail, "");

  r = Failed(std::runtime_error("CUDA out of memory. Tried to allocate 2.00 GiB\nframe #0"), h);
  EXPECT_EQ(Name(r.status), "oom");
  EXPECT_EQ(r.error_detail, "CUDA out of memory. Tried to allocate 2.00 GiB\nframe #0");

  r = Failed(TechniqueFailure("technique 'x' failed in on_batch: kaputt"), h);
  EXPECT_EQ(Name(r.status), "failed");
  EXPECT_EQ(r.error_detail, "technique 'x' failed in on_batch: kaputt");

  r = Failed(TechniqueFailure("technique 'x' failed in on_batch: MPS backend out of memory"), h);
  EXPECT_EQ(Name(r.status), "oom");

  r = Failed(data::DataError("cannot allocate memory for 'x.npy'"), h);  // data errors are never oom
  EXPECT_EQ(Name(r.status), "failed");

  h.ctx.abort(TrialStatus::kNan, "loss scale collapsed");
  r = Failed(TrialAborted{}, h);
  EXPECT_EQ(Name(r.status), "nan");
  EXPECT_EQ(r.error, "loss scale collapsed");

  // A technique that explains an exception (abort, then throw): its status and reason, the
  // exception's text kept in the detail.
  r = Failed(std::runtime_error("CUDA error: operation not permitted when stream is capturing"), h);
  EXPECT_EQ(Name(r.status), "nan");
  EXPECT_EQ(r.error, "loss scale collapsed");
  EXPECT_EQ(r.error_detail, "loss scale collapsed\nCUDA error: operation not permitted when stream is capturing");

  EXPECT_THROW(Failed(42, h), int);  // not a trial's failure
}

TEST(TrialRecord, FinishKeepsTheFirstLineAsTheErrorAndTheNotes) {
  store::TrialRecord rec;
  rec.error_detail = "interpreter failed\nthe reason";
  FinishRecord(rec, {"first", "second"});
  EXPECT_EQ(rec.error, "interpreter failed");
  EXPECT_EQ(rec.error_detail, "interpreter failed\nthe reason");
  EXPECT_EQ(rec.environment.at("note.00"), "first");
  EXPECT_EQ(rec.environment.at("note.01"), "second");
  EXPECT_FALSE(rec.finished_at.empty());

  store::TrialRecord aborted;
  aborted.error = "why\nmore";
  FinishRecord(aborted, {});
  EXPECT_EQ(aborted.error, "why");
  EXPECT_EQ(aborted.error_detail, "why\nmore");
}

}  // namespace
}  // namespace runx::engine
