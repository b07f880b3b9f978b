#pragma once
/// Collective operations across the rank processes of a data-parallel trial, as a technique sees
/// them (TrialContext::collectives). The runner owns the process group (c10d Gloo or NCCL, made
/// after a rendezvous through a FileStore in the trial's folder); this interface keeps c10d's
/// types, and their differences between LibTorch versions, out of the plugin API.
#include <memory>
#include <string>

#include <torch/types.h>

namespace runx {

/// A collective that was started and may still be running.
class PendingCollective {
 public:
  virtual ~PendingCollective() = default;
  /// Blocks until the collective has finished (on CUDA: until its result is ordered before the
  /// work queued next on the current stream). Throws when a peer failed.
  virtual void wait() = 0;
};

class Collectives {
 public:
  virtual ~Collectives() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  /// "gloo" or "nccl".
  virtual std::string backend() const = 0;
  /// Starts replacing `tensor` (dense, contiguous, on the trial's device) by its sum over every
  /// rank, in place. Every rank must start the same collectives in the same order.
  virtual std::unique_ptr<PendingCollective> all_reduce_sum(torch::Tensor tensor) = 0;
  /// Replaces `tensor` by rank `root`'s, in place, and waits.
  virtual void broadcast(torch::Tensor tensor, int root) = 0;
};

}  // namespace runx
