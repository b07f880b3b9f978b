#pragma once
// A trial's record as its run stores it: what the child (or the crash that ended it) said of the
// trial, with what the run knows of it added. The child says how the trial went (device, status,
// steps, metrics, environment, times); the run says what the trial is (its config and label, its
// identities, its place in the plan). Torch-free.
#include <cstdint>
#include <vector>

#include "spec/sweep.h"
#include "store/store.h"
#include "sweep/device_slots.h"
#include "sweep/sweep.h"

namespace runx::engine {

/// Fills in `rec`, the record of planned trial `t` (prepared as `p`) that run `run_id` ran: the
/// run, the trial's identities and input files, its config, label, baseline flag, repeat and
/// order; its device where the trial named none. The only writer of these fields: neither the
/// child nor a record made for a crash (sweep/child.h) sets them. With --devices (`slot`, one of `devices`): the
/// machine's name of a GPU the child saw as cuda:0, the slot and whether trials shared its device.
/// An error with no detail gets the error as its detail.
void RecordInRun(store::TrialRecord& rec, int64_t run_id, const spec::PlannedTrial& t, const PreparedTrial& p,
                 const DeviceSlot* slot, const std::vector<DeviceSlot>& devices);

}  // namespace runx::engine
