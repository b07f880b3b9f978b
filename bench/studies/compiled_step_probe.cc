// Feasibility probe for issue 13 (a compiled training step from C++): loads a training-step package
// made by tools/compile_step.py with LibTorch's AOTIModelPackageLoader, feeds it parameters,
// buffers and a batch laid out as FILE.pt2.json says, writes the buffer updates back, applies SGD
// with momentum (at::_foreach ops, as torch.optim.SGD's foreach path does) to the gradients it
// returns, and times N steps with CUDA events. Not part of runx: the measurement that decides the
// design of the compiled_step technique. Build and run on the GPU machine (bench/gpu-checks.sh step):
// PROBE_PROFILE=FILE.json also writes the kernels of 5 steps there (bench/studies/kernel_diff.py compares).
//   target runx_compiled_step_probe (bench/CMakeLists.txt; CUDA, LibTorch 2.6+), then
//   build-device/runx_compiled_step_probe FILE.pt2 50
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <ATen/Context.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

namespace {

at::ScalarType DType(const std::string& name) {
  if (name == "float32") return at::kFloat;
  if (name == "bfloat16") return at::kBFloat16;
  if (name == "int64") return at::kLong;
  throw std::runtime_error("dtype '" + name + "' not handled by the probe");
}

// A tensor of the sidecar entry's shape, dtype and strides, initialised like a fresh model.
at::Tensor Make(const nlohmann::json& e, int64_t num_classes) {
  const auto shape = e["shape"].get<std::vector<int64_t>>();
  const auto stride = e["stride"].get<std::vector<int64_t>>();
  const auto opts = at::TensorOptions().device(at::kCUDA).dtype(DType(e["dtype"]));
  const std::string kind = e["kind"], name = e["name"];
  at::Tensor t = at::empty_strided(shape, stride, opts);
  if (kind == "target") return t.copy_(at::randint(num_classes, shape, opts));
  if (t.scalar_type() == at::kLong) return t.zero_();
  if (name.find("running_var") != std::string::npos ||
      (kind == "parameter" && shape.size() == 1 && name.find("bn") != std::string::npos &&
       name.find(".weight") != std::string::npos))
    return t.fill_(1);
  if (kind == "buffer" || (kind == "parameter" && shape.size() == 1)) return t.zero_();
  return t.normal_(0, kind == "input" ? 1.0 : 0.02);
}

// The device kernels of `steps` calls of `step`, by name, as tools/compile_step.py's --profile-dir
// writes them: {"steps": n, "kernels": {name: [calls, us]}}.
template <typename Step>
void ProfileKernels(Step&& step, int steps, const std::string& path) {
  namespace prof = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  const std::set<ActivityType> activities{ActivityType::CUDA};
  const torch::profiler::impl::ProfilerConfig config(torch::profiler::impl::ProfilerState::KINETO, false, false);
  torch::cuda::synchronize();
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
  for (int i = 0; i < steps; ++i) step();
  torch::cuda::synchronize();
  auto result = prof::disableProfiler();
  nlohmann::json kernels = nlohmann::json::object();
  int64_t calls = 0;
  double us = 0;
  for (const auto& e : result->events()) {
    if (e.deviceType() != c10::DeviceType::CUDA) continue;
    auto& k = kernels[e.name()];
    if (k.is_null()) k = nlohmann::json::array({0, 0.0});
    const double d = static_cast<double>(e.durationNs()) / 1000.0;
    k[0] = k[0].get<int64_t>() + 1;
    k[1] = k[1].get<double>() + d;
    ++calls, us += d;
  }
  std::ofstream(path) << nlohmann::json{{"steps", steps}, {"kernels", kernels}}.dump();
  std::printf("profile: %s: %.0f kernels, %.2f ms of kernel time per step\n", path.c_str(),
              static_cast<double>(calls) / steps, us / steps / 1000.0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: probe FILE.pt2 [steps] [no-benchmark]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int steps = argc > 2 ? std::stoi(argv[2]) : 50;
  nlohmann::json side;
  std::ifstream(path + ".json") >> side;
  const int64_t num_classes = side.value("num_classes", 1000), batch = side["batch"];
  c10::InferenceMode no_autograd;  // the package is a plain function: no autograd on our side
  // As PyTorch's peer (torch.backends.cudnn.benchmark) and runx's trials: the package's
  // convolutions are calls into cuDNN, whose heuristic picks are far slower in bf16 channels_last.
  at::globalContext().setBenchmarkCuDNN(argc > 3 ? std::string(argv[3]) != "no-benchmark" : true);

  auto t0 = std::chrono::steady_clock::now();
  torch::inductor::AOTIModelPackageLoader loader(path, "model", /*run_single_threaded=*/false);
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::vector<at::Tensor> inputs, params, momenta;
  std::vector<int> param_index;  // input index of each parameter, in order
  for (const auto& e : side["inputs"]) {
    inputs.push_back(Make(e, num_classes));
    if (e["kind"] == "parameter") {
      params.push_back(inputs.back());
      momenta.push_back(at::zeros_like(inputs.back()));
    }
  }
  std::vector<std::string> out_kind;
  std::vector<std::vector<int64_t>> out_shape;
  std::vector<int> buffer_target;  // for each output: the input it updates (buffer_update), else -1
  for (const auto& o : side["outputs"]) {
    out_kind.push_back(o["kind"]);
    out_shape.push_back(o["shape"].get<std::vector<int64_t>>());
    int target = -1;
    if (o["kind"] == "buffer_update")
      for (size_t i = 0; i < side["inputs"].size(); ++i)
        if (side["inputs"][i]["name"] == o["name"]) target = static_cast<int>(i);
    buffer_target.push_back(target);
  }
  const double lr = 0.1, momentum = 0.9;
  double first_loss = 0, last_loss = 0;
  auto step = [&]() {
    std::vector<at::Tensor> out = loader.run(inputs);
    std::vector<at::Tensor> grads;
    at::Tensor loss;
    if (out.size() != out_kind.size())
      throw std::runtime_error("the package returned " + std::to_string(out.size()) + " outputs, its sidecar lists " +
                               std::to_string(out_kind.size()));
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].sizes() != c10::IntArrayRef(out_shape[i]))
        throw std::runtime_error("output " + std::to_string(i) + " (" + side["outputs"][i]["name"].get<std::string>() +
                                 ") has shape " + c10::str(out[i].sizes()) + ", the sidecar says " +
                                 c10::str(c10::IntArrayRef(out_shape[i])));
      if (out_kind[i] == "buffer_update")
        inputs[buffer_target[i]].copy_(out[i]);
      else if (out_kind[i] == "loss")
        loss = out[i];
      else
        grads.push_back(out[i]);
    }
    // SGD with momentum, foreach: buf = momentum * buf + grad; p -= lr * buf
    at::_foreach_mul_(momenta, momentum);
    at::_foreach_add_(momenta, grads);
    at::_foreach_add_(params, momenta, -lr);
    return loss;
  };
  t0 = std::chrono::steady_clock::now();
  first_loss = step().item<double>();
  const double first_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int i = 0; i < 10; ++i) step();
  at::cuda::CUDAEvent start(cudaEventDefault), end(cudaEventDefault);
  const auto stream = c10::cuda::getCurrentCUDAStream();
  start.record(stream);
  at::Tensor loss;
  for (int i = 0; i < steps; ++i) loss = step();
  end.record(stream);
  end.synchronize();
  last_loss = loss.item<double>();
  const double ms = start.elapsed_time(end) / steps;
  if (const char* profile = std::getenv("PROBE_PROFILE")) ProfileKernels(step, 5, profile);
  std::printf(
      "{\"probe\": \"runx-cxx-aoti-step\", \"package\": \"%s\", \"outputs\": %zu, \"load_s\": %.2f, "
      "\"first_step_s\": %.2f, \"ms_per_step\": %.3f, \"samples_per_s\": %.1f, \"first_loss\": %.4f, "
      "\"last_loss\": %.4f}\n",
      path.c_str(), out_kind.size(), load_s, first_s, ms, batch * 1000.0 / ms, first_loss, last_loss);
  return std::isfinite(last_loss) ? 0 : 1;
}
