#pragma once
// A TorchScript Linear layer built in C++ (the tests have no Python to script one): what
// torch.jit.script(nn.Linear) gives, with a `training` attribute as scripted modules have.
#include <cstdint>
#include <string>

#include <torch/script.h>
#include <torch/torch.h>

namespace runx::testing {

/// weight ~ N(0, 1) * weight_scale, shape [out, in]; bias ~ N(0, 1) * bias_scale, shape [out].
inline torch::jit::Module JitLinear(const std::string& type, int64_t in, int64_t out, double weight_scale = 0.3,
                                    double bias_scale = 0.1) {
  torch::jit::Module m(type);
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter("weight", torch::randn({out, in}) * weight_scale, /*is_buffer=*/false);
  m.register_parameter("bias", torch::randn({out}) * bias_scale, false);
  m.define("def forward(self, x):\n  return torch.addmm(self.bias, x, self.weight.t())\n");
  return m;
}

}  // namespace runx::testing
