#pragma once
// Gradients all-reduced in buckets while the backward pass runs, as PyTorch DDP's Reducer does:
// a hook on each parameter copies its gradient into its bucket's flat buffer as soon as autograd
// has computed it; a full bucket starts its all-reduce at once (asynchronously, in bucket order
// on every rank), overlapping the rest of the backward pass; after the backward pass every bucket
// is waited for and the average over the ranks is written into each parameter's .grad.
#include <cstdint>
#include <memory>
#include <vector>

#include <torch/types.h>

#include "runx/collectives.h"

namespace runx::data_parallel {

class GradientReducer {
 public:
  /// Hooks every parameter of `params` that requires a gradient (each once, however often it is
  /// listed). Buckets hold at least `cap_bytes` (the first `first_cap_bytes`), see AssignBuckets;
  /// the parameters are taken in reverse order at first, then, after the first backward pass, in
  /// the order their gradients came in it.
  GradientReducer(const std::vector<torch::Tensor>& params, Collectives& ranks, int64_t cap_bytes,
                  int64_t first_cap_bytes);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  /// Before a backward pass: no gradient has arrived yet.
  void BeginBackward();
  /// After it: starts the buckets still waiting (gradients that never came count as zeros: a
  /// parameter this rank did not use), waits for every all-reduce, and writes the averages into
  /// the .grad of the parameters that got a gradient.
  void EndBackward();

  size_t bucket_count() const { return buckets_.size(); }
  /// Bytes of each bucket's buffer, in launch order.
  std::vector<int64_t> bucket_bytes() const;
  /// How many all-reduces the last backward pass started before it ended (overlapped with it).
  size_t started_during_backward() const { return started_early_; }

 private:
  struct Param {
    torch::Tensor tensor;
    size_t bucket = 0;
    int64_t offset = 0, numel = 0;
    bool ready = false;
  };
  struct Bucket {
    std::vector<size_t> params;
    torch::Tensor flat;
    size_t waiting = 0;  ///< gradients still to come in this backward pass
    std::unique_ptr<PendingCollective> work;
  };
  void OnGradient(size_t param, const torch::Tensor& grad);
  void StartReady();
  /// Assigns the parameters, taken in `order`, to buckets (AssignBuckets) and makes their buffers.
  void Assign(const std::vector<size_t>& order);
  /// After the first backward pass: the buckets again, in the order the gradients came (rank 0's,
  /// so that every rank agrees), as DDP rebuilds its buckets after its first iteration.
  void RebuildInArrivalOrder();

  Collectives& ranks_;
  std::vector<Param> params_;
  std::vector<Bucket> buckets_;
  std::vector<bool> complete_;
  std::vector<unsigned> hooks_;
  size_t next_ = 0, started_early_ = 0;
  bool in_backward_ = false, rebuilt_ = false;
  int64_t cap_bytes_, first_cap_bytes_;
  std::vector<size_t> arrival_;  ///< parameters in the order their gradients came (first pass)
};

}  // namespace runx::data_parallel
