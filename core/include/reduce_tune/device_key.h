// DeviceKey: what identifies a GPU for tuning purposes. Winners are stored per device
// (UUID), and fall back to other devices of the same compute capability.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>

namespace reduce_tune {

struct DeviceKey {
  std::string name;               // "NVIDIA H200"
  int cc_major = 0;               // compute capability
  int cc_minor = 0;
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  int memory_bus_bits = 0;
  std::int64_t memory_clock_khz = 0;
  std::string uuid;               // "GPU-xxxxxxxx-..." ; the identity of the card
  int driver_version = 0;         // as cudaDriverGetVersion reports it, e.g. 13000
  int runtime_version = 0;        // as cudaRuntimeGetVersion reports it

  int arch() const { return cc_major * 10 + cc_minor; }  // 90 for sm_90
  // Peak DRAM bandwidth from bus width and memory clock (double data rate), in GB/s.
  double peak_bandwidth_gbps() const;
  auto tie() const {
    return std::tie(name, cc_major, cc_minor, sm_count, l2_bytes, memory_bus_bits, memory_clock_khz, uuid,
                    driver_version, runtime_version);
  }
};
inline bool operator==(const DeviceKey& a, const DeviceKey& b) { return a.tie() == b.tie(); }
inline bool operator!=(const DeviceKey& a, const DeviceKey& b) { return !(a == b); }
inline bool operator<(const DeviceKey& a, const DeviceKey& b) { return a.tie() < b.tie(); }

std::ostream& operator<<(std::ostream& os, const DeviceKey& key);

}  // namespace reduce_tune
