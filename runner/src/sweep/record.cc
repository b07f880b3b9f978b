#include "sweep/record.h"

#include <string>

namespace runx::engine {

void RecordInRun(store::TrialRecord& rec, int64_t run_id, const spec::PlannedTrial& t, const PreparedTrial& p,
                 const DeviceSlot* slot, const std::vector<DeviceSlot>& devices) {
  rec.run_id = run_id;
  rec.config_hash = p.key.config_hash;
  rec.env_hash = p.key.env_hash;
  rec.platform_hash = p.key.platform_hash;
  rec.inputs_json = p.inputs;
  rec.config_json = p.config.dump();
  rec.label = t.label;
  rec.is_baseline = t.is_baseline;
  rec.repeat_index = t.repeat_index;
  rec.order_index = t.order_index;
  if (rec.device.empty()) rec.device = p.device;
  if (slot) {
    // The child saw its GPU as cuda:0; the store names the machine's device.
    if (slot->name.rfind("cuda:", 0) == 0 && rec.device.rfind("cuda", 0) == 0) rec.device = slot->name;
    rec.environment["device_slot"] = slot->name;
    rec.environment["device_slot_index"] = std::to_string(slot - devices.data());
    if (const std::string sharing = DeviceSharing(TrialsSideBySide(devices, p.device)); !sharing.empty())
      rec.environment["device_sharing"] = sharing;
  }
  if (rec.error_detail.empty()) rec.error_detail = rec.error;
}

}  // namespace runx::engine
