// A stand-in for the driver's libnvidia-ml.so.1 with two GPUs and fixed readings, so that the
// NVML reader (machine/nvml.cc) and the energy meter (machine/energy.cc) are tested through a real
// dlopen on machines without a driver.
// Exports the C entry points with NVML's signatures (nvml.h); GPU 1 lacks application clocks
// (NVML_ERROR_NOT_SUPPORTED = 3), as many GPUs do. nvmlDeviceGetCurrentClocksEventReasons is not
// exported: the reader must fall back to the older name.
// Energy: GPU 0 (bus 00000000:1B:00.0) draws 300 W, and its energy counter moves as a real one
// does, in steps: every 100 ms, by the energy since the last step. GPU 1 (00000000:3B:00.0) has
// no counter (NVML_ERROR_NOT_SUPPORTED), only a power reading of 72.5 W.
#include <chrono>
#include <cstring>

namespace {
struct Device {
  int index;
};
Device g_devices[2] = {{0}, {1}};
int g_initialised = 0;
const auto g_loaded = std::chrono::steady_clock::now();
}  // namespace

extern "C" {
int nvmlInit_v2() {
  ++g_initialised;
  return 0;
}
int nvmlShutdown() {
  --g_initialised;
  return 0;
}
int nvmlSystemGetDriverVersion(char* out, unsigned n) {
  std::strncpy(out, "580.95.05", n);
  return 0;
}
int nvmlSystemGetCudaDriverVersion_v2(int* v) {
  *v = 13000;
  return 0;
}
int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = 2;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, Device** d) {
  if (g_initialised <= 0 || i >= 2) return 1;
  *d = &g_devices[i];
  return 0;
}
int nvmlDeviceGetName(Device* d, char* out, unsigned n) {
  std::strncpy(out, d->index == 0 ? "Fake H200" : "Fake L4", n);
  return 0;
}
int nvmlDeviceGetMaxClockInfo(Device* d, int type, unsigned* mhz) {
  *mhz = type == 1 ? 1980 + d->index : 3201;
  return 0;
}
int nvmlDeviceGetApplicationsClock(Device* d, int type, unsigned* mhz) {
  if (d->index == 1) return 3;
  *mhz = type == 1 ? 1755 : 3201;
  return 0;
}
int nvmlDeviceGetClockInfo(Device* d, int, unsigned* mhz) {
  *mhz = d->index == 0 ? 345 : 1500;
  return 0;
}
int nvmlDeviceGetEnforcedPowerLimit(Device* d, unsigned* mw) {
  *mw = d->index == 0 ? 700000 : 72500;
  return 0;
}
int nvmlDeviceGetPersistenceMode(Device* d, int* on) {
  *on = d->index == 0;
  return 0;
}
int nvmlDeviceGetComputeMode(Device* d, int* mode) {
  *mode = d->index == 0 ? 0 : 3;
  return 0;
}
int nvmlDeviceGetTemperature(Device* d, int, unsigned* c) {
  *c = 31 + d->index;
  return 0;
}
struct Utilization {
  unsigned gpu, memory;
};
int nvmlDeviceGetUtilizationRates(Device* d, Utilization* u) {
  u->gpu = d->index == 0 ? 0 : 87;
  u->memory = 0;
  return 0;
}
int nvmlDeviceGetCurrentClocksThrottleReasons(Device* d, unsigned long long* mask) {
  *mask = d->index == 0 ? 0x1 : 0x4 | 0x40;
  return 0;
}
int nvmlDeviceGetComputeRunningProcesses_v3(Device* d, unsigned* count, void*) {
  *count = d->index == 0 ? 0 : 2;
  return *count == 0 ? 0 : 7;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus, Device** d) {
  if (g_initialised <= 0) return 1;
  if (std::strcmp(bus, "00000000:1B:00.0") == 0)
    *d = &g_devices[0];
  else if (std::strcmp(bus, "00000000:3B:00.0") == 0)
    *d = &g_devices[1];
  else
    return 6;  // NVML_ERROR_NOT_FOUND
  return 0;
}
int nvmlDeviceGetTotalEnergyConsumption(Device* d, unsigned long long* mj) {
  if (d->index != 0) return 3;
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - g_loaded).count();
  *mj = static_cast<unsigned long long>(ms / 100 * 100) * 300;  // 300 W = 300 mJ/ms, counted every 100 ms
  return 0;
}
int nvmlDeviceGetPowerUsage(Device* d, unsigned* mw) {
  *mw = d->index == 0 ? 300000 : 72500;
  return 0;
}
}
