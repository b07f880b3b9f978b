#include "trial/context.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include "spec/label.h"
#include "trial/host_memory.h"

namespace runx::engine {
namespace {

/// An ISO-8601 time without its separators, for a folder name.
std::string CompactTime(const std::string& iso) {
  std::string out;
  for (char c : iso)
    if (std::isalnum(static_cast<unsigned char>(c))) out += c;
  return out;
}

}  // namespace

torch::optim::Optimizer& RunnerContext::optimizer() {
  if (!optimizer_) throw std::logic_error("task 'infer' has no optimizer");
  return *optimizer_;
}

bool RunnerContext::has_technique(std::string_view name) const {
  return std::any_of(active_.begin(), active_.end(), [&](const ActiveTechnique& a) { return a.name == name; });
}

void RunnerContext::metric(std::string_view name, double value, std::string_view unit, int64_t step) {
  store::MetricRow m{std::string(name), value, std::string(unit), {}};
  if (step >= 0) m.step = step;
  rec_.metrics.push_back(std::move(m));
}

void RunnerContext::set_batch_size(int64_t n) {
  if (!in_train_begin_) throw std::logic_error("set_batch_size is only allowed in on_train_begin");
  if (n < 1) throw std::invalid_argument(fmt::format("batch size must be positive, not {}", n));
  data_->set_batch_size(n);
}

void RunnerContext::abort(TrialStatus status, std::string_view why) {
  if (status == TrialStatus::kOk) throw std::invalid_argument("abort: a trial cannot end early with status ok");
  if (!abort_status_) {
    abort_status_ = status;
    abort_why_ = std::string(why);
  }
}

std::string RunnerContext::artifact_dir() {
  if (artifact_dir_.empty()) {
    const char* root = std::getenv("RUNX_ARTIFACT_DIR");
    auto dir = std::filesystem::path(root && *root ? root : "results/artifacts") / trial_.name /
               fmt::format("{}-{}-{}", spec::LabelTrial(config_).label, CompactTime(rec_.started_at), ::getpid());
    std::filesystem::create_directories(dir);
    artifact_dir_ = std::filesystem::absolute(dir).string();
    record("artifact_dir", artifact_dir_);
  }
  return artifact_dir_;
}

int64_t RunnerContext::host_memory_limit() const { return host_memory::Limit(); }
void RunnerContext::set_host_memory_limit(int64_t bytes) { host_memory::SetLimit(bytes); }

void RunnerContext::EndTrainBegin() {
  in_train_begin_ = false;
  snapshot_.clear();
  snapshot_.shrink_to_fit();
}

}  // namespace runx::engine
