#include "data/data.h"

#include <fmt/format.h>

#include "data/sources.h"

namespace runx::data {

int64_t BatchSize(const nlohmann::json& d) {
  const auto& b = d.at("batch_size");
  return b.is_string() ? 1 : b.get<int64_t>();
}

bool HostPlacement(const nlohmann::json& d) { return d.value("placement", std::string("device")) == "host"; }

std::unique_ptr<DataSource> MakeDataSource(const nlohmann::json& data, const c10::Device& device, uint64_t seed) {
  const std::string source = data.at("source").get<std::string>();
  if (source == "synthetic") return MakeSynthetic(data, device, seed);
  if (source == "fashion-mnist") return MakeFashionMnist(data, device, seed);
  if (source == "memmap") return MakeMemmap(data, device, seed);
  if (source == "text") return MakeText(data, device, seed);
  throw DataError(
      fmt::format("unknown data source '{}'; expected 'synthetic', 'fashion-mnist', 'memmap' or 'text'", source));
}

}  // namespace runx::data
