#include "worker/weights_distance.h"

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include <torch/script.h>

namespace runx::engine {
namespace {

std::map<std::string, torch::Tensor> Parameters(const std::string& path) {
  torch::jit::Module module;
  try {
    module = torch::jit::load(path, torch::kCPU);
  } catch (const c10::Error& e) {
    throw std::runtime_error("cannot read the weights file '" + path + "': " + e.what_without_backtrace());
  }
  std::map<std::string, torch::Tensor> out;
  for (const auto& p : module.named_parameters(/*recurse=*/true))
    if (p.value.is_floating_point()) out.emplace(p.name, p.value.detach().to(torch::kDouble));
  return out;
}

}  // namespace

double UpdateRelativeDistance(const std::string& a, const std::string& b, const std::string& w0) {
  const auto pa = Parameters(a), pb = Parameters(b), p0 = Parameters(w0);
  if (pa.empty()) throw std::runtime_error("the weights file '" + a + "' holds no floating parameters");
  double diff = 0, update = 0;
  for (const auto& [name, x] : pa) {
    const auto y = pb.find(name), x0 = p0.find(name);
    if (y == pb.end() || x0 == p0.end())
      throw std::runtime_error("parameter '" + name + "' of '" + a + "' is missing from '" + (y == pb.end() ? b : w0) +
                               "'");
    if (!y->second.sizes().equals(x.sizes()) || !x0->second.sizes().equals(x.sizes()))
      throw std::runtime_error("parameter '" + name + "' has other shapes in '" + a + "', '" + b + "' and '" + w0 +
                               "'");
    diff += (x - y->second).pow(2).sum().item<double>();
    update += (x - x0->second).pow(2).sum().item<double>();
  }
  if (pb.size() != pa.size()) throw std::runtime_error("'" + b + "' holds parameters that '" + a + "' does not");
  if (diff == 0) return 0;
  if (update == 0) return std::numeric_limits<double>::infinity();
  return std::sqrt(diff) / std::sqrt(update);
}

}  // namespace runx::engine
