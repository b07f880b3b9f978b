#include "reducer.h"

#include <map>
#include <stdexcept>
#include <string>
#include <unordered_set>

#include <torch/torch.h>

#include "buckets.h"

namespace runx::data_parallel {

GradientReducer::GradientReducer(const std::vector<torch::Tensor>& params, Collectives& ranks, int64_t cap_bytes,
                                 int64_t first_cap_bytes)
    : ranks_(ranks), cap_bytes_(cap_bytes), first_cap_bytes_(first_cap_bytes) {
  // Gradients become ready roughly in the reverse of the parameters' registration order.
  std::unordered_set<const void*> seen;
  for (auto it = params.rbegin(); it != params.rend(); ++it)
    if (it->requires_grad() && seen.insert(it->unsafeGetTensorImpl()).second) params_.push_back({*it});
  std::vector<size_t> order(params_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Assign(order);
  for (size_t i = 0; i < params_.size(); ++i)
    hooks_.push_back(params_[i].tensor.register_hook([this, i](torch::Tensor grad) { OnGradient(i, grad); }));
}

void GradientReducer::Assign(const std::vector<size_t>& order) {
  std::map<std::string, int> kinds;
  std::vector<GradSlot> slots;
  for (size_t i : order) {
    const auto& t = params_[i].tensor;
    const std::string kind = std::string(c10::toString(t.scalar_type())) + "@" + t.device().str();
    const int k = kinds.emplace(kind, static_cast<int>(kinds.size())).first->second;
    slots.push_back({t.numel() * static_cast<int64_t>(t.element_size()), k});
  }
  buckets_.clear();
  for (auto& positions : AssignBuckets(slots, cap_bytes_, first_cap_bytes_)) {
    Bucket b;
    int64_t numel = 0;
    for (size_t pos : positions) {
      Param& p = params_[order[pos]];
      p.bucket = buckets_.size();
      p.offset = numel;
      p.numel = p.tensor.numel();
      numel += p.numel;
      b.params.push_back(order[pos]);
    }
    b.flat = torch::zeros({numel}, params_[b.params.front()].tensor.options().requires_grad(false));
    buckets_.push_back(std::move(b));
  }
  complete_.assign(buckets_.size(), false);
}

void GradientReducer::RebuildInArrivalOrder() {
  rebuilt_ = true;
  std::vector<size_t> order = arrival_;
  std::vector<bool> listed(params_.size(), false);
  for (size_t i : order) listed[i] = true;
  for (size_t i = 0; i < params_.size(); ++i)
    if (!listed[i]) order.push_back(i);  // no gradient in the first pass: at the end
  // Rank 0's order for every rank (a collective must start in the same order everywhere).
  auto shared =
      torch::tensor(std::vector<int64_t>(order.begin(), order.end()), torch::kLong).to(params_.front().tensor.device());
  ranks_.broadcast(shared, 0);
  shared = shared.cpu();
  for (size_t k = 0; k < order.size(); ++k)
    order[k] = static_cast<size_t>(shared[static_cast<int64_t>(k)].item<int64_t>());
  bool same = true;
  for (size_t k = 0; k < order.size() && same; ++k) same = order[k] == k;
  if (!same) Assign(order);
}

GradientReducer::~GradientReducer() {
  for (size_t i = 0; i < params_.size(); ++i) params_[i].tensor.remove_hook(hooks_[i]);
}

std::vector<int64_t> GradientReducer::bucket_bytes() const {
  std::vector<int64_t> out;
  for (const auto& b : buckets_) out.push_back(b.flat.numel() * static_cast<int64_t>(b.flat.element_size()));
  return out;
}

void GradientReducer::BeginBackward() {
  for (auto& p : params_) p.ready = false;
  for (auto& b : buckets_) {
    b.waiting = b.params.size();
    b.work.reset();
  }
  complete_.assign(buckets_.size(), false);
  next_ = 0;
  started_early_ = 0;
  in_backward_ = true;
}

void GradientReducer::OnGradient(size_t i, const torch::Tensor& grad) {
  if (!in_backward_) return;  // a backward pass outside the training step (none in runx)
  Param& p = params_[i];
  Bucket& b = buckets_[p.bucket];
  torch::NoGradGuard no_grad;
  auto slot = b.flat.narrow(0, p.offset, p.numel).view(p.tensor.sizes());
  if (p.ready) {  // a second gradient in the same pass (the graph was run twice)
    if (complete_[p.bucket]) throw std::logic_error("data_parallel: a gradient came after its bucket was sent");
    slot.add_(grad);
    return;
  }
  slot.copy_(grad);
  p.ready = true;
  if (!rebuilt_) arrival_.push_back(i);
  if (--b.waiting == 0) {
    complete_[p.bucket] = true;
    StartReady();
    started_early_ = next_;
  }
}

void GradientReducer::StartReady() {
  const int world = ranks_.world_size();
  for (size_t k : LaunchableBuckets(complete_, next_)) {
    if (world > 1) buckets_[k].flat.div_(world);  // summed over the ranks: the average
    buckets_[k].work = ranks_.all_reduce_sum(buckets_[k].flat);
  }
}

void GradientReducer::EndBackward() {
  in_backward_ = false;
  torch::NoGradGuard no_grad;
  for (size_t k = 0; k < buckets_.size(); ++k) {
    if (complete_[k]) continue;
    for (size_t i : buckets_[k].params)
      if (!params_[i].ready) buckets_[k].flat.narrow(0, params_[i].offset, params_[i].numel).zero_();
    complete_[k] = true;
  }
  StartReady();
  for (auto& b : buckets_) {
    b.work->wait();
    b.work.reset();
    for (size_t i : b.params) {
      Param& p = params_[i];
      torch::Tensor& grad = p.tensor.mutable_grad();
      if (!p.ready || !grad.defined()) continue;
      grad.copy_(b.flat.narrow(0, p.offset, p.numel).view(p.tensor.sizes()));
    }
  }
  if (!rebuilt_ && !params_.empty()) RebuildInArrivalOrder();
}

}  // namespace runx::data_parallel
