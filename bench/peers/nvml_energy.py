"""NVML energy from Python by the rule runx's trials use (runner/src/machine/energy.h), for peers
and for the counter's own behaviour. ctypes on the driver's libnvidia-ml.so.1; no pynvml.

  python3 bench/peers/nvml_energy.py --probe [--seconds 3]
      keeps GPU 0 busy with matmuls and polls its energy counter every 1 ms: how often the
      counter moves (the update period runx's rule depends on), and the power it implies next
      to nvmlDeviceGetPowerUsage. One JSON line.

  from nvml_energy import Meter; m = Meter(); m.start(); ...; joules, seconds = m.stop()
      the counter polled every 5 ms on a thread; the power between the first and the last
      change seen, times the span (runx's CounterMeter). None when the changes cover < 0.5 s.
"""
import argparse, ctypes, json, statistics, threading, time


class Nvml:
    def __init__(self, index=0):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        assert self.lib.nvmlInit_v2() == 0, "nvmlInit_v2 failed"
        self.dev = ctypes.c_void_p()
        assert self.lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(self.dev)) == 0

    def energy_mj(self):
        v = ctypes.c_ulonglong()
        r = self.lib.nvmlDeviceGetTotalEnergyConsumption(self.dev, ctypes.byref(v))
        return v.value if r == 0 else None

    def power_mw(self):
        v = ctypes.c_uint()
        r = self.lib.nvmlDeviceGetPowerUsage(self.dev, ctypes.byref(v))
        return v.value if r == 0 else None


class Meter:
    def __init__(self, index=0, poll_s=0.005, min_cover_s=0.5):
        self.nvml, self.poll_s, self.min_cover_s = Nvml(index), poll_s, min_cover_s

    def start(self):
        self.samples, self.stopping = [(time.perf_counter(), self.nvml.energy_mj())], threading.Event()
        def loop():
            while not self.stopping.wait(self.poll_s):
                self.samples.append((time.perf_counter(), self.nvml.energy_mj()))
        self.thread = threading.Thread(target=loop, daemon=True)
        self.thread.start()

    def stop(self):
        self.stopping.set(); self.thread.join()
        self.samples.append((time.perf_counter(), self.nvml.energy_mj()))
        seconds = self.samples[-1][0] - self.samples[0][0]
        changes = [s for p, s in zip(self.samples, self.samples[1:]) if s[1] != p[1]]
        if len(changes) < 2 or changes[-1][0] - changes[0][0] < self.min_cover_s:
            return None, seconds
        watts = (changes[-1][1] - changes[0][1]) / 1000 / (changes[-1][0] - changes[0][0])
        return watts * seconds, seconds


def probe(seconds):
    import torch
    nvml = Nvml(0)
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(20): a @ a
    torch.cuda.synchronize()
    samples, powers = [], []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(4): a @ a  # queued: the GPU stays busy while the host polls
        t = time.perf_counter()
        samples.append((t, nvml.energy_mj()))
        powers.append(nvml.power_mw())
        time.sleep(0.001)
    torch.cuda.synchronize()
    changes = [s for p, s in zip(samples, samples[1:]) if s[1] != p[1]]
    gaps = [(b[0] - a_[0]) * 1000 for a_, b in zip(changes, changes[1:])]
    watts = (changes[-1][1] - changes[0][1]) / 1000 / (changes[-1][0] - changes[0][0])
    print(json.dumps({"polls": len(samples), "poll_ms": round(seconds * 1000 / len(samples), 2),
                      "counter_changes": len(changes),
                      "update_ms_median": round(statistics.median(gaps), 1),
                      "update_ms_min": round(min(gaps), 1), "update_ms_max": round(max(gaps), 1),
                      "counter_watts": round(watts, 1),
                      "power_usage_watts_median": round(statistics.median(p for p in powers if p) / 1000, 1)}))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--probe", action="store_true")
    ap.add_argument("--seconds", type=float, default=3)
    a = ap.parse_args()
    if a.probe:
        probe(a.seconds)
