// c10d, the one place runx touches it. The calls used here (FileStore(path, n), the backends'
// (store, rank, size, options) constructors, allreduce/broadcast on a tensor vector, Work::wait)
// are the same in LibTorch 1.13 and 2.x: in 2.x ProcessGroupGloo/NCCL derive from c10d::Backend
// instead of c10d::ProcessGroup, which this file never names (GroupCollectives is a template).
#include "trial/process_group.h"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "runx/compat.h"

#if RUNX_HAS_C10D_GLOO
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#if RUNX_HAS_C10D_NCCL
#ifndef USE_C10D_NCCL
#define USE_C10D_NCCL
#endif
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace runx::engine {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

#if RUNX_HAS_C10D_GLOO || RUNX_HAS_C10D_NCCL
template <typename Work>
class Pending : public PendingCollective {
 public:
  explicit Pending(c10::intrusive_ptr<Work> work) : work_(std::move(work)) {}
  void wait() override { work_->wait(); }

 private:
  c10::intrusive_ptr<Work> work_;
};

/// Collectives over a c10d backend `Group` (ProcessGroupGloo or ProcessGroupNCCL).
template <typename Group>
class GroupCollectives : public Collectives {
 public:
  GroupCollectives(c10::intrusive_ptr<Group> group, int rank, int world, std::string backend)
      : group_(std::move(group)), rank_(rank), world_(world), backend_(std::move(backend)) {}
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  std::string backend() const override { return backend_; }
  std::unique_ptr<PendingCollective> all_reduce_sum(torch::Tensor tensor) override {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    auto work = group_->allreduce(tensors);
    return std::make_unique<Pending<typename decltype(work)::element_type>>(std::move(work));
  }
  void broadcast(torch::Tensor tensor, int root) override {
    std::vector<at::Tensor> tensors{std::move(tensor)};
    c10d::BroadcastOptions opts;
    opts.rootRank = root;
    group_->broadcast(tensors, opts)->wait();
  }

 private:
  c10::intrusive_ptr<Group> group_;
  int rank_, world_;
  std::string backend_;
};
#endif

}  // namespace

RankRole RoleFromEnvironment(const std::string& rendezvous) {
  RankRole role;
  role.rendezvous = rendezvous;
  role.local = false;
  role.rank = EnvInt("RANK", EnvInt("SLURM_PROCID", 0));
  role.world = EnvInt("WORLD_SIZE", EnvInt("SLURM_NTASKS", 0));
  role.local_rank = EnvInt("LOCAL_RANK", EnvInt("SLURM_LOCALID", 0));
  return role;
}

std::unique_ptr<Collectives> ConnectRanks(const RankRole& role, const std::string& backend, c10::Device device) {
  (void)device;  // NCCL only
  if (role.world < 1 || role.rank < 0 || role.rank >= role.world)
    throw std::runtime_error(
        fmt::format("data_parallel: rank {} of world size {} is not a rank", role.rank, role.world));
  if (backend == "gloo") {
#if RUNX_HAS_C10D_GLOO
    auto store = c10::make_intrusive<c10d::FileStore>(role.rendezvous, role.world);
    auto options = c10d::ProcessGroupGloo::Options::create();
    options->devices.push_back(role.local ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                          : c10d::ProcessGroupGloo::createDefaultDevice());
    auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, role.rank, role.world, options);
    return std::make_unique<GroupCollectives<c10d::ProcessGroupGloo>>(std::move(group), role.rank, role.world, backend);
#else
    throw std::runtime_error(
        "data_parallel: this runx was built without Gloo (its headers were not found: "
        "install libgloo-dev and rebuild)");
#endif
  }
  if (backend == "nccl") {
#if RUNX_HAS_C10D_NCCL
    c10::cuda::set_device(device.index() < 0 ? 0 : device.index());  // the backend uses the current device
    auto store = c10::make_intrusive<c10d::FileStore>(role.rendezvous, role.world);
    // Options given explicitly: not every 2.x version defaults the argument.
    auto group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, role.rank, role.world,
                                                             c10d::ProcessGroupNCCL::Options::create());
    return std::make_unique<GroupCollectives<c10d::ProcessGroupNCCL>>(std::move(group), role.rank, role.world, backend);
#else
    throw std::runtime_error(
        "data_parallel: this runx was built without NCCL (it needs LibTorch with CUDA and nccl.h)");
#endif
  }
  throw std::runtime_error(fmt::format("data_parallel: unknown backend '{}' (expected gloo or nccl)", backend));
}

}  // namespace runx::engine
