#include "data/data.h"

#include <fmt/format.h>

#include "data/sources.h"
#include "spec/issue.h"

namespace runx::data {

namespace {

using Maker = std::unique_ptr<DataSource> (*)(const nlohmann::json& d, const c10::Device& device, uint64_t seed);

/// The maker of each source of spec/catalogue.h's DataCatalogue (a unit test holds the two equal).
const std::vector<std::pair<std::string, Maker>>& Makers() {
  static const std::vector<std::pair<std::string, Maker>> makers = {
      {"synthetic", MakeSynthetic}, {"fashion-mnist", MakeFashionMnist}, {"memmap", MakeMemmap}, {"text", MakeText}};
  return makers;
}

}  // namespace

std::unique_ptr<DataSource> MakeDataSource(const nlohmann::json& data, const c10::Device& device, uint64_t seed) {
  const std::string source = data.at("source").get<std::string>();
  for (const auto& [name, make] : Makers())
    if (name == source) return make(data, device, seed);
  std::vector<std::string> expected;
  for (const auto& [name, make] : Makers()) expected.push_back("'" + name + "'");
  throw DataError(fmt::format("unknown data source '{}'; expected {}", source, spec::OrList(expected)));
}

std::vector<std::string> DataSourceNames() {
  std::vector<std::string> names;
  for (const auto& [name, make] : Makers()) names.push_back(name);
  return names;
}

}  // namespace runx::data
