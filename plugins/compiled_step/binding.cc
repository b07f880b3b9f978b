#include "binding.h"

#include <map>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <torch/torch.h>

namespace runx::compiled_step {

Binding::Binding(Sidecar sidecar, torch::nn::Module& model) : sidecar_(std::move(sidecar)) {
  std::map<std::string, torch::Tensor> params, buffers;
  for (auto& p : model.named_parameters()) params[p.key()] = p.value();
  for (auto& b : model.named_buffers()) buffers[b.key()] = b.value();
  const auto find = [&](const Slot& slot, bool parameter) {
    auto& from = parameter ? params : buffers;
    const auto it = from.find(slot.name);
    if (it == from.end())
      throw std::invalid_argument(fmt::format("compiled_step: the sidecar's {} '{}' is not one of the model's {}s",
                                              slot.kind, slot.name, parameter ? "parameter" : "buffer"));
    return it->second;
  };
  inputs_.assign(sidecar_.inputs.size(), torch::Tensor());
  for (size_t i = 0; i < sidecar_.inputs.size(); ++i) {
    const auto& slot = sidecar_.inputs[i];
    if (slot.kind == "parameter" || slot.kind == "buffer") {
      state_.emplace_back(i, find(slot, slot.kind == "parameter"));
      inputs_[i] = state_.back().second.detach();  // the same storage, without autograd
    } else if (slot.kind == "input") {
      input_index_ = i;
    } else if (slot.kind == "target") {
      target_index_ = i;
    }
  }
  for (const auto& slot : sidecar_.outputs) {
    if (slot.kind == "buffer_update")
      targets_.push_back(find(slot, false));
    else if (slot.kind == "gradient")
      targets_.push_back(find(slot, true));
    else
      targets_.push_back(torch::Tensor());
  }
}

torch::Tensor Binding::Step(const Batch& batch, const Run& run) {
  torch::NoGradGuard no_grad;
  for (auto& [i, t] : state_)  // a technique may have replaced a tensor's storage (set_data): follow it
    if (inputs_[i].data_ptr() != t.data_ptr()) inputs_[i] = t.detach();
  if (!checked_) CheckBatch(batch);
  inputs_[input_index_] = batch.input;
  inputs_[target_index_] = batch.target;
  std::vector<torch::Tensor> out = run(inputs_);
  inputs_[input_index_] = torch::Tensor(), inputs_[target_index_] = torch::Tensor();
  if (out.size() != sidecar_.outputs.size())
    throw std::runtime_error(fmt::format("compiled_step: the package returned {} outputs, its sidecar lists {}",
                                         out.size(), sidecar_.outputs.size()));
  torch::Tensor loss;
  for (size_t i = 0; i < out.size(); ++i) {
    const auto& slot = sidecar_.outputs[i];
    if (!checked_ && out[i].sizes() != c10::IntArrayRef(slot.shape))
      throw std::runtime_error(fmt::format("compiled_step: output {} ({} '{}') has shape {}, the sidecar says {}", i,
                                           slot.kind, slot.name, c10::str(out[i].sizes()),
                                           c10::str(c10::IntArrayRef(slot.shape))));
    if (slot.kind == "buffer_update")
      targets_[i].copy_(out[i]);
    else if (slot.kind == "gradient")
      targets_[i].mutable_grad() = out[i];
    else
      loss = out[i];
  }
  checked_ = true;
  return loss;
}

void Binding::CheckBatch(const Batch& batch) const {
  for (const auto& slot : sidecar_.inputs) {
    if (slot.kind != "input" && slot.kind != "target") continue;
    const torch::Tensor& t = slot.kind == "input" ? batch.input : batch.target;
    if (t.sizes().vec() != slot.shape || DtypeName(t) != slot.dtype || !SameLayout(t, slot.stride))
      throw std::runtime_error(
          fmt::format("compiled_step: the batch's {} is {} {} strides {}, the package expects {} {} strides {}",
                      slot.kind, DtypeName(t), c10::str(t.sizes()), c10::str(t.strides()), slot.dtype,
                      c10::str(c10::IntArrayRef(slot.shape)), c10::str(c10::IntArrayRef(slot.stride))));
  }
}

}  // namespace runx::compiled_step
