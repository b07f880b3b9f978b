// Out-of-memory recognition: the messages of every backend, and look-alikes that are not.
#include "outcome/failure.h"

#include <csignal>
#include <new>
#include <string>

#include <gtest/gtest.h>

namespace runx::engine {
namespace {

TEST(Failure, RecognizesOutOfMemoryOfEveryBackend) {
  const char* oom[] = {
      "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 139.81 GiB total capacity)",
      "MPS backend out of memory (MPS allocated: 17.00 GB, other allocations: 1.00 GB)",
      "std::bad_alloc",
      "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc",
      "[enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't allocate memory: "
      "you tried to allocate 1099511627776 bytes. Error code 12 (Cannot allocate memory)",
      "DefaultCPUAllocator: not enough memory: you tried to allocate 4096 bytes.",
      "CPU out of memory: tried to allocate 400 bytes with 100 of 256 in use (runx host limit)",
      "technique 'auto_batch' failed in on_train_begin: CUDA Out Of Memory",
  };
  for (const char* m : oom) {
    EXPECT_TRUE(IsOutOfMemory(m)) << m;
    EXPECT_EQ(FailureStatus(m), TrialStatus::kOom) << m;
  }
  EXPECT_TRUE(IsOutOfMemory(std::bad_alloc().what()));
}

TEST(Failure, LeavesOtherFailuresAlone) {
  const char* other[] = {
      "",
      "index 7 is out of bounds for dimension 0 with size 5",
      "Expected all tensors to be on the same device, but found at least two devices",
      "mat1 and mat2 shapes cannot be multiplied (4x12 and 8x3)",
      "memory format channels_last is not supported",
      "technique 'test_throws' failed in on_setup: kaputt",
      "cannot open 'data/train.npy': No such file or directory",
      "Segmentation fault",
      "out of range",
  };
  for (const char* m : other) {
    EXPECT_FALSE(IsOutOfMemory(m)) << m;
    EXPECT_EQ(FailureStatus(m), TrialStatus::kFailed) << m;
  }
}

TEST(Failure, OnlySigkillIsTheOutOfMemoryKiller) {
  EXPECT_TRUE(IsOutOfMemoryKill(SIGKILL));
  EXPECT_FALSE(IsOutOfMemoryKill(SIGSEGV));
  EXPECT_FALSE(IsOutOfMemoryKill(SIGABRT));
  EXPECT_FALSE(IsOutOfMemoryKill(SIGTERM));
}

}  // namespace
}  // namespace runx::engine
