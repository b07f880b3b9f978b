#pragma once
// When each planned trial of a run is tried: in plan order, one at a time, or side by side on the
// devices of --devices; trials another runner holds are tried again every wait_poll_s until their
// result can be reused or their runner is gone. Torch-free.
#include "sweep/run.h"

namespace runx::engine {

/// One trial at a time, in plan order, on this thread; then the trials other runners held, until
/// none is left or the run is interrupted.
void RunInOrder(SweepRun& run);

/// --devices: the plan's trials on the devices in parallel, one trial per device, started in plan
/// order as devices come free. Claims, records and the observer stay on this thread; each running
/// trial has a thread that waits for its worker, whose progress events this thread relays. However
/// this function is left, every worker is ended and every thread joined.
void RunOnDevices(SweepRun& run);

}  // namespace runx::engine
