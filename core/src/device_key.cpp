#include "reduce_tune/device_key.h"

namespace reduce_tune {

double DeviceKey::peak_bandwidth_gbps() const {
  // bytes per transfer * transfers per second * 2 (double data rate)
  return static_cast<double>(memory_bus_bits) / 8.0 * static_cast<double>(memory_clock_khz) *
         1e3 * 2.0 / 1e9;
}

std::ostream& operator<<(std::ostream& os, const DeviceKey& key) {
  return os << key.name << " (sm_" << key.arch() << ", " << key.sm_count << " SMs, "
            << key.uuid << ")";
}

}  // namespace reduce_tune
