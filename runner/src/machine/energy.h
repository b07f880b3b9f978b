#pragma once
// The energy a trial's measured steps used, for joules per sample and average watts beside every
// speedup: NVML's energy counter of the trial's GPU (its power draw sampled and integrated where
// the counter is missing, before Volta), the RAPL counters of the CPU packages under
// /sys/class/powercap on the CPU. A meter reads a whole device: other work on the same GPU, or on
// the same CPU package, counts too (noise.other_cpus tells how busy the CPUs were). Linux; no
// LibTorch: the trial names its GPU by PCI bus id.
#include <memory>
#include <optional>
#include <string>

namespace runx::engine {

/// What a meter measured between Start and Stop.
struct EnergySpan {
  double joules = 0;
  double seconds = 0;  ///< the wall time between Start and Stop
};

/// A span's energy, or why there is none (a counter that stopped answering, a span too short).
struct EnergyReading {
  std::optional<EnergySpan> span;
  std::string why_not;
};

/// NVML's energy counter does not count continuously: it moves in steps (every 100 ms on the
/// H100: docs/benchmarks.md, "Energy per sample"), so two readings at a span's ends are off by up to a
/// step each. The meter therefore polls it through the span every kEnergyPollMs and takes the
/// power between the first and the last step it saw (each seen within kEnergyPollMs), times the
/// span: those steps must lie at least kMinEnergyCoverS apart, which bounds the error of the
/// power to 2 x kEnergyPollMs / kMinEnergyCoverS = 2%. A sampled power draw is integrated over a
/// span of at least as long.
inline constexpr double kEnergyPollMs = 5;
inline constexpr double kMinEnergyCoverS = 0.5;

struct EnergyOptions {
  double poll_ms = kEnergyPollMs;
  double min_cover_s = kMinEnergyCoverS;
};

class EnergyMeter {
 public:
  virtual ~EnergyMeter() = default;
  /// What it reads, for the trial's environment (energy.source), e.g.
  /// "nvml energy counter: NVIDIA H100 80GB HBM3 (00000000:1B:00.0)".
  virtual std::string source() const = 0;
  /// Begins a span (when the measured steps begin, the device synchronized).
  virtual void Start() = 0;
  /// Ends the span (after the last measured step, the device synchronized).
  virtual EnergyReading Stop() = 0;
};

/// The meter's switch, the environment's RUNX_ENERGY: unset, empty or "on" meters (the default);
/// "off" does not (what the meter costs is measured so: bench/energy-overhead.sh). Any other value
/// is a mistake to refuse before anything runs: a meter left on without a word would have its
/// figures taken for switched-off ones. The one place the variable is read.
struct EnergySwitch {
  bool on = true;
  std::string error;  ///< for a value that is neither: what it is and what was expected
};
EnergySwitch ReadEnergySwitch();

/// A meter, or why a device has none (recorded as the trial's energy.absent).
struct EnergyMeterOrWhy {
  std::unique_ptr<EnergyMeter> meter;
  std::string why_not;
};

/// The GPU at `pci_bus_id` ("00000000:1B:00.0") through NVML (`nvml_library`, default the
/// driver's): its energy counter, else its power draw sampled every poll_ms and integrated.
EnergyMeterOrWhy OpenGpuEnergyMeter(const std::string& pci_bus_id, const EnergyOptions& options = {},
                                    const std::string& nvml_library = "libnvidia-ml.so.1");

/// The CPU packages: the sum of `root`/sys/class/powercap's zones named package-N (RAPL; Intel,
/// and AMD on Linux 5.8 and newer), each counter's wrap-around (max_energy_range_uj) undone.
/// Not the subzones (core, uncore, dram: parts of a package), not psys (the platform). Kernels
/// since 5.10 let only root read the counters; the reason says so where that is why.
EnergyMeterOrWhy OpenCpuEnergyMeter(const std::string& root = "", const EnergyOptions& options = {});

}  // namespace runx::engine
