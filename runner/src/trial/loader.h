#pragma once
// Where the step loop draws its batches from: device data directly, host data through a
// technique's loader or the runner's own.
#include <memory>
#include <vector>

#include <c10/core/Device.h>

#include "data/data.h"
#include "runx/plugin.h"
#include "trial/context.h"

namespace runx::engine {

/// The loader of a trial with what it reads from: `loader` may refer to `host`, so it is
/// declared after it (and destroyed first).
struct TrialLoader {
  std::unique_ptr<HostBatches> host;  ///< host data as the techniques see it; null for device data
  std::unique_ptr<Loader> loader;
};

/// Device data: batches straight from the source. Host data: the first technique's make_loader
/// that returns one, else the runner's loader, which fetches batch i when asked and copies it to
/// `device`, staged through pinned memory with a non-blocking copy on CUDA.
TrialLoader MakeTrialLoader(data::DataSource& data, c10::Device device, std::vector<ActiveTechnique>& active,
                            TrialContext& ctx);

}  // namespace runx::engine
