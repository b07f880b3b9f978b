#include "trial/cuda_support.h"

#include <deque>

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace runx::engine::cuda {

std::string DeviceName(int index) { return at::cuda::getDeviceProperties(index)->name; }

std::string DeviceSummary(int index) {
  const cudaDeviceProp* p = at::cuda::getDeviceProperties(index);
  return fmt::format("{} ({:.1f} GiB, compute capability {}.{}, {} SMs)", p->name,
                     p->totalGlobalMem / double(1ull << 30), p->major, p->minor, p->multiProcessorCount);
}

int64_t PeakAllocatedBytes(int index) {
  return c10::cuda::CUDACachingAllocator::getDeviceStats(index).allocated_bytes[0].peak;
}

void ResetPeak(int index) { c10::cuda::CUDACachingAllocator::resetPeakStats(index); }

std::string CudaRuntimeVersion() {
  int v = 0;
  cudaRuntimeGetVersion(&v);
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

std::string PciBusId(int index) {
  const cudaDeviceProp* p = at::cuda::getDeviceProperties(index);
  return fmt::format("{:08X}:{:02X}:{:02X}.0", p->pciDomainID, p->pciBusID, p->pciDeviceID);
}

struct EventTimer::Impl {
  std::deque<at::cuda::CUDAEvent> events;  // deque: CUDAEvent is move-only, addresses stay put
};

EventTimer::EventTimer(int index) : impl_(new Impl) { (void)index; }
EventTimer::~EventTimer() { delete impl_; }

void EventTimer::Mark() {
  impl_->events.emplace_back(cudaEventDefault);
  impl_->events.back().record();
}

std::vector<double> EventTimer::ElapsedMs() {
  std::vector<double> ms;
  if (impl_->events.empty()) return ms;
  impl_->events.back().synchronize();
  for (size_t i = 1; i < impl_->events.size(); ++i) ms.push_back(impl_->events[i - 1].elapsed_time(impl_->events[i]));
  return ms;
}

}  // namespace runx::engine::cuda
