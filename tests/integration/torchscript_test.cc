// A model nobody here wrote, as users bring it: torchvision's VisionTransformer traced by
// torch.jit.trace (tests/data/torchscript/vit_tiny_traced.pt), trained by the real runx binary.
#include <string>

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include "store_fixture.h"

namespace {

class TracedModel : public runx::testing::StoreFixture {
 protected:
  TracedModel() : StoreFixture("runx_traced") {}
};

const std::string kTracedVit = RUNX_SOURCE_DIR "/tests/data/torchscript/vit_tiny_traced.pt";

// It trains like a built-in model, and the trial records how it ran: in the plain interpreter, with
// the trace's integer shape constants on the host (found in its graphs; none to move on the CPU).
TEST_F(TracedModel, ATracedAttentionModelTrainsAndItsTrialSaysHowItRan) {
  const auto id = Run("name: traced_vit\ndevice: cpu\nseed: 1\nmodel: {name: torchscript, path: " + kTracedVit +
                      "}\n"
                      "data: {source: synthetic, shape: [3, 16, 16], num_classes: 10, batch_size: 16}\n"
                      "train: {warmup_steps: 2, steps: 10, eval: false, optimizer: {name: sgd, lr: 0.05}}\n");
  ASSERT_EQ(Status(id), "ok") << last_output_ << Error(id);
  EXPECT_EQ(Metric(id, "param_count"), 5722);  // make_vit_tiny.py printed it when it wrote the file
  EXPECT_EQ(Env(id, "torchscript.executor"), "interpreter");
  EXPECT_GE(std::stoi(Env(id, "torchscript.host_constants")), 3);
  EXPECT_EQ(Env(id, "torchscript.host_constants_moved"), "0");
  EXPECT_GT(std::stoi(Get("SELECT count(DISTINCT loss) FROM steps WHERE trial_id = ?", id)), 8);
}

// On a GPU the file is loaded onto the device, and the shape constants are moved back to the host.
// Left on the device, each aten::Int of the shape arithmetic would be a device-to-host copy, which
// a CUDA graph cannot capture ("operation not permitted when stream is capturing"); on the host the
// whole training step is captured and replayed, and it trains.
TEST_F(TracedModel, CudaGraphsCaptureATracedAttentionModelsStep) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const auto id =
      Run("name: graphs_traced_vit\ndevice: cuda\nseed: 1\nmodel: {name: torchscript, path: " + kTracedVit +
          "}\ndata: {source: synthetic, shape: [3, 16, 16], num_classes: 10, batch_size: 32}\n"
          "train: {warmup_steps: 5, steps: 30, eval: false, optimizer: {name: sgd, lr: 0.05, momentum: 0.9}}\n"
          "optimizations: {cuda_graphs: {warmup: 3}}\n");
  ASSERT_EQ(Status(id), "ok") << last_output_ << Error(id);
  EXPECT_EQ(Env(id, "torchscript.host_constants_moved"), Env(id, "torchscript.host_constants"));
  EXPECT_EQ(Metric(id, "cuda_graphs.captures"), 1);
  EXPECT_EQ(Metric(id, "cuda_graphs.replays"), 32);
  EXPECT_GT(std::stoi(Get("SELECT count(DISTINCT loss) FROM steps WHERE trial_id = ?", id)), 25);
}

}  // namespace
