#include "trial/data_parallel.h"

#include <stdexcept>

#include <fmt/format.h>
#include <torch/torch.h>

namespace runx::engine {
namespace {

/// NCCL reduces device tensors only: CPU values go through the rank's device and back.
torch::Tensor OnCollectiveDevice(Collectives& ranks, c10::Device device, const torch::Tensor& t) {
  return ranks.backend() == "nccl" ? t.to(device) : t.clone();
}

}  // namespace

const RankRole* RankOf(const spec::TrialConfig& trial, const std::optional<RankRole>& rank) {
  return trial.ranks() > 0 && rank ? &*rank : nullptr;
}

c10::Device RankDevice(c10::Device configured, const RankRole& role) {
  if (!configured.is_cuda()) return configured;
  const int base = configured.has_index() ? configured.index() : 0;
  return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(base + role.local_rank));
}

std::unique_ptr<Collectives> JoinRanks(const RankRole& role, int world_size, c10::Device device,
                                       std::map<std::string, std::string>& environment) {
  const auto it = environment.find(std::string("technique.") + kDataParallel);
  if (it == environment.end()) throw std::logic_error("JoinRanks without the data_parallel technique");
  const auto settings = nlohmann::json::parse(it->second);
  const std::string backend = settings.value("backend", "gloo");
  if (role.world < 1)
    throw std::runtime_error(
        "data_parallel: the ranks' launcher set neither RANK and WORLD_SIZE (as torchrun "
        "does) nor SLURM_PROCID and SLURM_NTASKS (as srun does)");
  if (world_size != role.world)
    throw std::runtime_error(
        fmt::format("data_parallel: world_size is {} but {} ranks were started", world_size, role.world));
  auto ranks = ConnectRanks(role, backend, device);
  environment["data_parallel.rank"] = std::to_string(role.rank);
  environment["data_parallel.world_size"] = std::to_string(role.world);
  environment["data_parallel.backend"] = backend;
  environment["data_parallel.launcher"] = role.local ? "runx" : "environment";
  return ranks;
}

void AverageOverRanks(Collectives& ranks, c10::Device device, torch::Tensor& values) {
  auto t = OnCollectiveDevice(ranks, device, values);
  ranks.all_reduce_sum(t)->wait();
  values = (t.to(torch::kCPU, torch::kDouble) / ranks.world_size()).contiguous();
}

double SumOverRanks(Collectives& ranks, c10::Device device, double value) {
  auto t = OnCollectiveDevice(ranks, device, torch::full({1}, value, torch::kDouble));
  ranks.all_reduce_sum(t)->wait();
  return t.to(torch::kCPU).item<double>();
}

}  // namespace runx::engine
