#include "outcome/record_json.h"

namespace runx::engine {

nlohmann::json ToJson(const store::TrialRecord& r) {
  nlohmann::json steps = nlohmann::json::array(), metrics = nlohmann::json::array();
  for (const auto& s : r.steps)
    steps.push_back(
        {s.phase, s.step, s.wall_ms, s.data_ms, s.samples, s.loss ? nlohmann::json(*s.loss) : nlohmann::json()});
  for (const auto& m : r.metrics)
    metrics.push_back({m.name, m.value, m.unit, m.step ? nlohmann::json(*m.step) : nlohmann::json()});
  return {{"label", r.label},
          {"device", r.device},
          {"status", Name(r.status)},
          {"error", r.error},
          {"started_at", r.started_at},
          {"finished_at", r.finished_at},
          {"config_json", r.config_json},
          {"steps", steps},
          {"metrics", metrics},
          {"environment", r.environment},
          {"error_detail", r.error_detail},
          {"run_id", r.run_id},
          {"config_hash", r.config_hash},
          {"env_hash", r.env_hash},
          {"platform_hash", r.platform_hash},
          {"inputs_json", r.inputs_json},
          {"is_baseline", r.is_baseline},
          {"repeat_index", r.repeat_index},
          {"order_index", r.order_index}};
}

store::TrialRecord RecordFromJson(const nlohmann::json& j) {
  store::TrialRecord r;
  r.label = j.at("label");
  r.device = j.at("device");
  const auto status = ParseTrialStatus(j.at("status").get<std::string>());
  if (!status) throw std::runtime_error("a trial record with an unknown status: " + j.at("status").dump());
  r.status = *status;
  r.error = j.at("error");
  r.started_at = j.at("started_at");
  r.finished_at = j.at("finished_at");
  r.config_json = j.at("config_json");
  for (const auto& s : j.at("steps")) {
    store::StepRow row{s[0], s[1], s[2], s[3], s[4], {}};
    if (!s[5].is_null()) row.loss = s[5].get<double>();
    r.steps.push_back(row);
  }
  for (const auto& m : j.at("metrics")) {
    store::MetricRow row{m[0], m[1], m[2], {}};
    if (!m[3].is_null()) row.step = m[3].get<int64_t>();
    r.metrics.push_back(row);
  }
  r.environment = j.at("environment").get<std::map<std::string, std::string>>();
  r.error_detail = j.value("error_detail", "");
  r.run_id = j.value("run_id", int64_t{0});
  r.config_hash = j.value("config_hash", "");
  r.env_hash = j.value("env_hash", "");
  r.platform_hash = j.value("platform_hash", "");
  r.inputs_json = j.value("inputs_json", "{}");
  r.is_baseline = j.value("is_baseline", false);
  r.repeat_index = j.value("repeat_index", 0);
  r.order_index = j.value("order_index", 0);
  return r;
}

}  // namespace runx::engine
