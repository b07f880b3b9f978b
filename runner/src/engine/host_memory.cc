#include "engine/host_memory.h"

#include <atomic>
#include <cstring>
#include <fstream>
#include <string>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

namespace runx::engine::host_memory {
namespace {

std::atomic<int64_t> g_current{0}, g_peak{0}, g_limit{0};
std::atomic<bool> g_installed{false};

/// What a counted allocation's DataPtr carries: the inner allocator's DataPtr and the size.
struct Counted {
  c10::DataPtr inner;
  int64_t bytes;
};

void DeleteCounted(void* ctx) {
  auto* c = static_cast<Counted*>(ctx);
  g_current.fetch_sub(c->bytes, std::memory_order_relaxed);
  delete c;  // frees the memory through the inner allocator's deleter
}

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}

  // LibTorch 1.13 declares allocate() const, 2.3+ non-const: define both, without `override`, so
  // that whichever the base declares is overridden and the other is an unused overload.
  c10::DataPtr allocate(size_t n) const { return Allocate(n); }
  c10::DataPtr allocate(size_t n) { return Allocate(n); }
  // Pure virtual from LibTorch 2.3 on; harmless before.
  void copy_data(void* dest, const void* src, std::size_t count) const { std::memcpy(dest, src, count); }

 private:
  c10::DataPtr Allocate(size_t n) const {
    const auto bytes = static_cast<int64_t>(n);
    const int64_t now = g_current.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    const int64_t limit = g_limit.load(std::memory_order_relaxed);
    if (limit > 0 && now > limit) {
      g_current.fetch_sub(bytes, std::memory_order_relaxed);
      TORCH_CHECK(false, "CPU out of memory: tried to allocate ", n, " bytes with ", now - bytes,
                  " in use under runx's host memory limit of ", limit, " bytes");
    }
    int64_t peak = g_peak.load(std::memory_order_relaxed);
    while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    c10::DataPtr inner;
    try {
      inner = inner_->allocate(n);
    } catch (...) {
      g_current.fetch_sub(bytes, std::memory_order_relaxed);
      throw;
    }
    void* data = inner.get();
    const c10::Device device = inner.device();
    return {data, new Counted{std::move(inner), bytes}, &DeleteCounted, device};
  }
  c10::Allocator* inner_;
};

}  // namespace

void Install() {
  if (g_installed.exchange(true)) return;
  static CountingAllocator allocator(c10::GetCPUAllocator());
  c10::SetCPUAllocator(&allocator, /*priority=*/100);
}

bool Installed() { return g_installed.load(); }
int64_t CurrentBytes() { return g_current.load(); }
int64_t PeakBytes() { return g_peak.load(); }
void ResetPeak() { g_peak.store(g_current.load()); }
void SetLimit(int64_t bytes) { g_limit.store(bytes > 0 ? bytes : 0); }
int64_t Limit() { return g_limit.load(); }

int64_t AvailableBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

}  // namespace runx::engine::host_memory
