#pragma once
/// The one place where LibTorch versions differ (1.13 from Debian, 2.x from pip/official builds).
/// Everything here is inline so that plugins, which may include only runner/include/runx/, can use
/// it too. Rule: no other file branches on TORCH_VERSION_*.
#include <string>

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <torch/version.h>

#define RUNX_TORCH_VERSION (TORCH_VERSION_MAJOR * 100 + TORCH_VERSION_MINOR)

#if RUNX_TORCH_VERSION >= 201
#include <ATen/detail/MPSHooksInterface.h>
#include <torch/mps.h>
#define RUNX_HAS_MPS_API 1
#else
#define RUNX_HAS_MPS_API 0
#endif

// AOTInductor packages (.pt2 from torch._inductor.aoti_compile_and_package), loaded with
// torch::inductor::AOTIModelPackageLoader: LibTorch 2.6 and later (models/aoti.cc).
#if RUNX_TORCH_VERSION >= 206 && __has_include(<torch/csrc/inductor/aoti_package/model_package_loader.h>)
#define RUNX_HAS_AOTI 1
// The loader's run_single_threaded flag (2.7): no model-container locks or events around a run,
// which CUDA graph capture needs (an event query while capturing is an error).
#if RUNX_TORCH_VERSION >= 207
#define RUNX_AOTI_SINGLE_THREADED_ARG , /*run_single_threaded=*/true
#else
#define RUNX_AOTI_SINGLE_THREADED_ARG
#endif
#else
#define RUNX_HAS_AOTI 0
#endif

// c10d process groups (the data_parallel technique). Gloo needs its headers (Debian: libgloo-dev;
// LibTorch's own c10d headers include them); NCCL needs LibTorch with CUDA and nccl.h. The engine
// makes the groups (trial/process_group.cc); the plugin only asks whether a backend is there.
#if __has_include(<torch/csrc/distributed/c10d/FileStore.hpp>) && __has_include(<gloo/context.h>)
#define RUNX_HAS_C10D_GLOO 1
#else
#define RUNX_HAS_C10D_GLOO 0
#endif
#if defined(RUNX_WITH_CUDA) && __has_include(<nccl.h>) && \
    __has_include(<torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>) && \
    __has_include(<torch/csrc/distributed/c10d/FileStore.hpp>)
#define RUNX_HAS_C10D_NCCL 1
#else
#define RUNX_HAS_C10D_NCCL 0
#endif

namespace runx::compat {

/// Whether this build can run data-parallel ranks over Gloo / NCCL (RUNX_HAS_C10D_*).
constexpr bool kHasGloo = RUNX_HAS_C10D_GLOO;
constexpr bool kHasNccl = RUNX_HAS_C10D_NCCL;

/// Whether this LibTorch can load AOTInductor packages (RUNX_HAS_AOTI).
constexpr bool kHasAotInductor = RUNX_HAS_AOTI;

/// LibTorch version this code was compiled against, as MAJOR*100+MINOR (1.13 -> 113, 2.11 -> 211).
constexpr int kTorchVersion = RUNX_TORCH_VERSION;

inline std::string TorchVersionString() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

// ---- autocast ------------------------------------------------------------------------------

/// Whether LibTorch can autocast on `device` to `dtype`; `why` says why not.
inline bool AutocastSupported(c10::DeviceType device, c10::ScalarType dtype, std::string* why) {
  const bool half = dtype == c10::kHalf, bf16 = dtype == c10::kBFloat16;
  if (!half && !bf16) {
    if (why) *why = "autocast lowers precision to fp16 or bf16 only";
    return false;
  }
  switch (device) {
    case c10::DeviceType::CUDA:
      return true;
    case c10::DeviceType::CPU:
      if (bf16 || kTorchVersion >= 204) return true;
      if (why) *why = "fp16 autocast on the CPU needs LibTorch >= 2.4 (this is " + TorchVersionString() + "); use bf16";
      return false;
    case c10::DeviceType::MPS:
      if ((half && kTorchVersion >= 205) || (bf16 && kTorchVersion >= 206)) return true;
      if (why)
        *why = std::string("autocast on MPS needs LibTorch >= ") + (half ? "2.5" : "2.6") + " (this is " +
               TorchVersionString() + ")";
      return false;
    default:
      if (why) *why = "no autocast for this device type";
      return false;
  }
}

#if RUNX_TORCH_VERSION >= 204
inline bool IsAutocastEnabled(c10::DeviceType d) { return at::autocast::is_autocast_enabled(d); }
inline void SetAutocastEnabled(c10::DeviceType d, bool on) { at::autocast::set_autocast_enabled(d, on); }
inline c10::ScalarType GetAutocastDtype(c10::DeviceType d) { return at::autocast::get_autocast_dtype(d); }
inline void SetAutocastDtype(c10::DeviceType d, c10::ScalarType t) { at::autocast::set_autocast_dtype(d, t); }
#else
inline bool IsAutocastEnabled(c10::DeviceType d) {
  return d == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
}
inline void SetAutocastEnabled(c10::DeviceType d, bool on) {
  if (d == c10::DeviceType::CPU)
    at::autocast::set_cpu_enabled(on);
  else
    at::autocast::set_enabled(on);
}
inline c10::ScalarType GetAutocastDtype(c10::DeviceType d) {
  return d == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype() : at::autocast::get_autocast_gpu_dtype();
}
inline void SetAutocastDtype(c10::DeviceType d, c10::ScalarType t) {
  if (d == c10::DeviceType::CPU)
    at::autocast::set_autocast_cpu_dtype(t);
  else
    at::autocast::set_autocast_gpu_dtype(t);
}
#endif

/// RAII autocast region, the C++ equivalent of `with torch.autocast(device, dtype)`.
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device, c10::ScalarType dtype)
      : device_(device), was_enabled_(IsAutocastEnabled(device)), was_dtype_(GetAutocastDtype(device)) {
    SetAutocastEnabled(device_, true);
    SetAutocastDtype(device_, dtype);
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    SetAutocastEnabled(device_, was_enabled_);
    SetAutocastDtype(device_, was_dtype_);
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool was_enabled_;
  c10::ScalarType was_dtype_;
};

// ---- MPS -----------------------------------------------------------------------------------

/// True when this LibTorch has MPS built in AND a Metal device is usable.
inline bool MpsAvailable() { return at::hasMPS(); }

inline void MpsSynchronize() {
#if RUNX_HAS_MPS_API
  torch::mps::synchronize();
#endif
}

inline void MpsEmptyCache() {
#if RUNX_HAS_MPS_API
  if (MpsAvailable()) at::detail::getMPSHooks().emptyCache();
#endif
}

/// Bytes currently allocated by the MPS allocator (0 where LibTorch cannot tell).
inline size_t MpsAllocatedBytes() {
#if RUNX_HAS_MPS_API
  if (MpsAvailable()) return at::detail::getMPSHooks().getCurrentAllocatedMemory();
#endif
  return 0;
}

inline bool MpsSetMemoryFraction(double fraction) {
#if RUNX_HAS_MPS_API
  if (MpsAvailable()) {
    at::detail::getMPSHooks().setMemoryFraction(fraction);
    return true;
  }
#endif
  (void)fraction;
  return false;
}

}  // namespace runx::compat

// ---- determinism and fused optimizers (plugins determinism, fused_optimizer) ---------------

#include <cstdint>
#include <stdexcept>

#include <ATen/core/Tensor.h>

#if RUNX_TORCH_VERSION >= 204
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/_fused_sgd.h>
/// LibTorch has the single-kernel optimizer steps `_fused_sgd_` and `_fused_adamw_` with CPU and
/// CUDA kernels (AdamW since 2.1 and SGD since 2.2 on CUDA only; runx asks for 2.4, where both have
/// both). 1.13 has only `_fused_adam_` (CUDA).
#define RUNX_HAS_FUSED_OPTIMIZERS 1
#else
#define RUNX_HAS_FUSED_OPTIMIZERS 0
#endif

namespace runx::compat {

/// torch.use_deterministic_algorithms(on, warn_only=...). Same signature in 1.13 and 2.x.
inline void SetDeterministicAlgorithms(bool on, bool warn_only) {
  at::globalContext().setDeterministicAlgorithms(on, warn_only);
}

/// Seeds the MPS generator where this LibTorch can (torch::manual_seed covers CPU and CUDA only).
/// Returns false where it cannot (1.13 has no MPS API) or no MPS device is usable.
inline bool MpsManualSeed(uint64_t seed) {
#if RUNX_HAS_MPS_API
  if (MpsAvailable()) {
    torch::mps::manual_seed(seed);
    return true;
  }
#endif
  (void)seed;
  return false;
}

/// Whether `_fused_sgd_` / `_fused_adamw_` can run on `device`; `why` says why not.
inline bool FusedOptimizerSupported(c10::DeviceType device, std::string* why) {
  if (!RUNX_HAS_FUSED_OPTIMIZERS) {
    if (why) *why = "fused optimizer kernels need LibTorch >= 2.4 (this is " + TorchVersionString() + ")";
    return false;
  }
  switch (device) {
    case c10::DeviceType::CUDA:
    case c10::DeviceType::CPU:
      return true;
    case c10::DeviceType::MPS:
      if (kTorchVersion >= 205) return true;
      if (why) *why = "fused optimizer kernels on MPS need LibTorch >= 2.5 (this is " + TorchVersionString() + ")";
      return false;
    default:
      if (why) *why = "no fused optimizer kernels for this device type";
      return false;
  }
}

/// One `_fused_adamw_` step (no amsgrad, no maximize, no grad scaling). `steps` are one float32
/// scalar tensor per parameter on its device, already incremented for this step.
inline void FusedAdamW(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                       at::TensorList steps, double lr, double beta1, double beta2, double weight_decay, double eps) {
#if RUNX_HAS_FUSED_OPTIMIZERS
  at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr, beta1, beta2, weight_decay,
                    eps, /*amsgrad=*/false, /*maximize=*/false);
#else
  (void)params, (void)grads, (void)exp_avgs, (void)exp_avg_sqs, (void)steps, (void)lr, (void)beta1, (void)beta2,
      (void)weight_decay, (void)eps;
  throw std::logic_error("_fused_adamw_ needs LibTorch >= 2.4 (this is " + TorchVersionString() + ")");
#endif
}

/// One `_fused_sgd_` step (no maximize, no grad scaling). `momentum_buffers` is empty when
/// momentum is 0; on the first step the buffers are allocated but uninitialised (`first_step`).
inline void FusedSgd(at::TensorList params, at::TensorList grads, at::TensorList momentum_buffers, double weight_decay,
                     double momentum, double lr, double dampening, bool nesterov, bool first_step) {
#if RUNX_HAS_FUSED_OPTIMIZERS
  at::_fused_sgd_(params, grads, momentum_buffers, weight_decay, momentum, lr, dampening, nesterov,
                  /*maximize=*/false, first_step);
#else
  (void)params, (void)grads, (void)momentum_buffers, (void)weight_decay, (void)momentum, (void)lr, (void)dampening,
      (void)nesterov, (void)first_step;
  throw std::logic_error("_fused_sgd_ needs LibTorch >= 2.4 (this is " + TorchVersionString() + ")");
#endif
}

}  // namespace runx::compat

// ---- attention (the gpt model) -------------------------------------------------------------

#include <cmath>
#include <limits>

#include <ATen/ops/dropout.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>

#if RUNX_TORCH_VERSION >= 200
#include <ATen/ops/scaled_dot_product_attention.h>
/// LibTorch has the fused `scaled_dot_product_attention` (2.0+; 1.13 has only a private,
/// experimental `_scaled_dot_product_attention` with another signature).
#define RUNX_HAS_SDPA 1
#else
#define RUNX_HAS_SDPA 0
#endif

namespace runx::compat {

/// Whether CausalAttention runs LibTorch's fused scaled_dot_product_attention.
constexpr bool kHasFusedAttention = RUNX_HAS_SDPA;

/// Causal attention written out: softmax(q k^T / sqrt(d), each position masked from the ones after
/// it) v, the softmax computed in float32. q, k, v: [..., T, d], the same T. The path where LibTorch
/// has no scaled_dot_product_attention, and the computation the fused one is tested against.
/// `dropout_p` > 0 drops attention weights (training only: pass 0 in eval).
inline at::Tensor MaskedCausalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                        double dropout_p = 0.0) {
  const int64_t t = q.size(-2);
  const auto scores = at::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  const auto future = at::ones({t, t}, q.options().dtype(at::kBool)).triu(1);
  auto weights =
      scores.masked_fill(future, -std::numeric_limits<double>::infinity()).softmax(-1, at::kFloat).to(v.scalar_type());
  if (dropout_p > 0) weights = at::dropout(weights, dropout_p, /*train=*/true);
  return at::matmul(weights, v);
}

/// Causal self-attention: `scaled_dot_product_attention(q, k, v, is_causal=true)` where LibTorch
/// has it (flash / memory-efficient kernels on CUDA), MaskedCausalAttention where it does not.
inline at::Tensor CausalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  double dropout_p = 0.0) {
#if RUNX_HAS_SDPA
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, dropout_p, /*is_causal=*/true);
#else
  return MaskedCausalAttention(q, k, v, dropout_p);
#endif
}

}  // namespace runx::compat
