#pragma once
// The process group of a data-parallel trial's rank: a c10d FileStore rendezvous in the trial's
// folder (no ports, so trials that start at once cannot collide), then Gloo or NCCL.
#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "runx/collectives.h"

namespace runx::engine {

/// Which rank of how many this process is, and where the ranks meet.
struct RankRole {
  int rank = 0;
  int world = 1;
  int local_rank = 0;      ///< the rank's index on its host: which GPU it takes
  std::string rendezvous;  ///< the FileStore's file, on a file system every rank sees
  bool local = true;       ///< every rank on this host: Gloo binds to the loopback address
};

/// The rank's role from the environment torchrun and srun set: RANK/WORLD_SIZE, else
/// SLURM_PROCID/SLURM_NTASKS; nullptr-like (world 0) when neither is set. `rendezvous` is kept.
RankRole RoleFromEnvironment(const std::string& rendezvous);

/// Joins the other ranks and makes the process group of `backend` ("gloo" or "nccl") on `device`.
/// Blocks until every rank has joined. Throws std::runtime_error when this build has no such
/// backend or the rendezvous fails.
std::unique_ptr<Collectives> ConnectRanks(const RankRole& role, const std::string& backend, c10::Device device);

}  // namespace runx::engine
