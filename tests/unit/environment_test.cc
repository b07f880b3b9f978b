// The facts a result depends on besides its config: the BLAS library LibTorch's CPU matrix
// products run on is found in this very process, recorded, and part of the CPU platform (the
// reference BLAS is an order of magnitude slower than OpenBLAS: a result measured on one must not
// be reused for the other).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "spec/spec.h"
#include "sweep/device_slots.h"
#include "trial/environment.h"
#include "worker/identity.h"

namespace runx::engine {
namespace {

namespace fs = std::filesystem;

TEST(Environment, NamesTheBlasLibraryThisProcessLoaded) {
  const std::string blas = BlasLibrary();
  EXPECT_EQ(HostEnvironment().at("blas"), blas);
  std::ifstream in("/proc/self/maps");  // what the loader mapped, read independently
  std::stringstream maps;
  maps << in.rdbuf();
  if (blas == "none loaded") {  // LibTorch with its own BLAS compiled in (pip's, with MKL)
    EXPECT_EQ(maps.str().find("/libblas.so"), std::string::npos);
  } else {
    EXPECT_TRUE(fs::path(blas).is_absolute()) << blas;
    EXPECT_TRUE(fs::exists(blas)) << blas;
    EXPECT_NE(maps.str().find(blas), std::string::npos) << blas << " is not mapped into this process";
  }
}

TEST(Environment, TheReferenceBlasIsToldFromOpenBlas) {
  EXPECT_TRUE(IsReferenceBlas("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"));
  EXPECT_FALSE(IsReferenceBlas("/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3"));
  EXPECT_FALSE(IsReferenceBlas("none loaded"));
}

TEST(Environment, TheBlasLibraryIsPartOfTheCpuPlatformOnly) {
  auto env = HostEnvironment();
  env["device_name"] = "AMD EPYC";
  auto other = env;
  other["blas"] = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0";
  env["blas"] = "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3";
  const c10::Device cpu(c10::DeviceType::CPU), cuda(c10::DeviceType::CUDA, 0);
  EXPECT_NE(PlatformIdentity(cpu, env), PlatformIdentity(cpu, other));
  EXPECT_EQ(PlatformIdentity(cuda, env), PlatformIdentity(cuda, other));  // cuBLAS does a GPU's products
  EXPECT_NE(PlatformIdentity(cuda, env), PlatformIdentity(cpu, env));
  EXPECT_EQ(PlatformIdentity(cpu), PlatformIdentity(cpu, TrialEnvironment(cpu)));
}

// --devices cpu,cpu: trials that share the CPU's cores side by side are another platform, so that
// a sequential run does not reuse them nor they a sequential run's; every other identity stays
// what it was, byte for byte.
TEST(Environment, CpuTrialsSideBySideAreAnotherPlatform) {
  const c10::Device cpu(c10::DeviceType::CPU);
  const std::string alone = PlatformIdentity(cpu);
  const auto side_by_side = [&](const std::string& devices, const std::string& device) {
    return SideBySidePlatform(alone, TrialsSideBySide(ParseDeviceSlots(devices, 2, std::nullopt), device));
  };
  EXPECT_NE(side_by_side("cpu,cpu", "cpu"), alone);
  EXPECT_NE(side_by_side("cpu,cpu,cpu", "cpu"), side_by_side("cpu,cpu", "cpu"));
  EXPECT_EQ(side_by_side("cpu,cpu", "cpu"), spec::Sha256Hex(alone + "|side by side: 2 cpu trials"));
  EXPECT_EQ(SideBySidePlatform(alone, TrialsSideBySide({}, "cpu")), alone);  // no --devices
  EXPECT_EQ(side_by_side("cpu", "cpu"), alone);
  EXPECT_EQ(side_by_side("cpu,cuda:0", "cpu"), alone);
  EXPECT_EQ(side_by_side("cuda:0,cuda:1", "cuda:0"), alone);
  EXPECT_EQ(side_by_side("cpu,cpu", "cuda:0"), alone);  // a GPU trial has its GPU to itself
}

}  // namespace
}  // namespace runx::engine
