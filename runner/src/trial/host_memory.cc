#include "trial/host_memory.h"

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

/// Each counted block starts with a header holding its size; the tensor's data follows, 64-byte
/// aligned like LibTorch's own CPU allocations. The data pointer is also the DataPtr's context
/// (LibTorch asserts that for raw allocations), so the size has to live in the block itself.
constexpr size_t kHeader = 64;
c10::DeleterFnPtr g_inner_free = nullptr;

void FreeCounted(void* data) {
  if (!data) return;
  auto* base = static_cast<char*>(data) - kHeader;
  int64_t bytes;
  std::memcpy(&bytes, base, sizeof bytes);
  g_current.fetch_sub(bytes, std::memory_order_relaxed);
  g_inner_free(base);
}

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}

  // LibTorch 1.13 declares allocate() const, 2.3+ non-const: define both, without `override`, so
  // that whichever the base declares is overridden and the other is an unused overload.
  c10::DataPtr allocate(size_t n) const { return Allocate(n); }
  c10::DataPtr allocate(size_t n) { return Allocate(n); }
  c10::DeleterFnPtr raw_deleter() const override { return &FreeCounted; }
  // Pure virtual from LibTorch 2.3 on; harmless before.
  void copy_data(void* dest, const void* src, std::size_t count) const { std::memcpy(dest, src, count); }

 private:
  c10::DataPtr Allocate(size_t n) const {
    if (n == 0) return inner_->allocate(0);
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
    void* base = nullptr;
    try {
      base = inner_->raw_allocate(n + kHeader);
    } catch (...) {
      g_current.fetch_sub(bytes, std::memory_order_relaxed);
      throw;
    }
    std::memcpy(base, &bytes, sizeof bytes);
    void* data = static_cast<char*>(base) + kHeader;
    return {data, data, &FreeCounted, c10::Device(c10::DeviceType::CPU)};
  }
  c10::Allocator* inner_;
};

}  // namespace

void Install() {
  if (g_installed.exchange(true)) return;
  c10::Allocator* inner = c10::GetCPUAllocator();
  g_inner_free = inner->raw_deleter();
  if (!g_inner_free) {  // an allocator whose blocks cannot be freed by pointer alone: leave it be
    g_installed = false;
    return;
  }
  static CountingAllocator allocator(inner);
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
