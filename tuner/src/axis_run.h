// The GPU side of axis tuning (axis_tuner.cpp), internal to the tuner library: the
// checks of a candidate at one shape (poisoned outputs, a reference reduction, a bitwise
// comparison on the device) and the run over a plan's classes, called by tune_device.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "device_state.h"
#include "reduce_tune/tuner/axis_tuner.h"
#include "reduce_tune/tuner/measure.h"
#include "reduce_tune/tuner/tuner.h"

namespace reduce_tune::tuner::detail {

struct AxisReferenceProgram;

class AxisCheckState {
 public:
  explicit AxisCheckState(DeviceState& device);
  ~AxisCheckState();
  AxisCheckState(const AxisCheckState&) = delete;
  AxisCheckState& operator=(const AxisCheckState&) = delete;

  // Input data of at least `data_bytes`, outputs (candidate's and reference) of `out_bytes`.
  void reserve(std::uint64_t data_bytes, std::uint64_t out_bytes);
  // "" when `spec` (compiled as `kernels`) reduces `shape` of the data set (kind, seed)
  // right at every output, else why not.
  std::string check(const AxisKernelSpec& spec, const KernelHandles& kernels, const AxisShape& shape,
                    verify::FillKind kind, std::uint64_t seed);
  // Compares outputs at `got` with the reference of (op, types) at `shape`.
  std::string compare(Op op, const TypeRule& types, const AxisShape& shape, verify::FillKind kind,
                      std::uint64_t seed, const void* got);
  // Runs `spec` on the data set at `shape` into `out` and waits.
  void run(const AxisKernelSpec& spec, const KernelHandles& kernels, const AxisShape& shape, verify::FillKind kind,
           std::uint64_t seed, void* out);
  // Times `spec` at `shape` with the axis screening policy (fewer samples than the flat
  // tuner's: a class ranks dozens of candidates at two shapes).
  // best_ms > 0: racing against that best (TimingPolicy), above the finalists' band.
  TimingResult time(const AxisKernelSpec& spec, const KernelHandles& kernels, const AxisShape& shape,
                    double best_ms = 0);
  // The binary-cache keys of the reference programs compiled so far.
  const std::set<std::string>& binary_keys() const { return binary_keys_; }

 private:
  const unsigned char* data(DType dtype, verify::FillKind kind, std::uint64_t seed);
  AxisReferenceProgram& program(Op op, const TypeRule& types);
  const void* reference(Op op, const TypeRule& types, const AxisShape& shape, verify::FillKind kind,
                        std::uint64_t seed);

  DeviceState& device_;
  DeviceBuffer data_, out_, reference_, result_;
  std::optional<std::tuple<DType, verify::FillKind, std::uint64_t>> holds_;
  std::optional<std::tuple<Op, DType, DType, AxisLayout, std::uint64_t, std::uint64_t, verify::FillKind, std::uint64_t>>
      reference_holds_;
  std::map<std::tuple<Op, DType, DType, DType>, std::unique_ptr<AxisReferenceProgram>> programs_;
  std::set<std::string> binary_keys_;
};

// Tunes the plan's classes in order, storing each class in one transaction; progress
// counts them as buckets index_offset + 1 .. of `total`.
void tune_axis_classes(DeviceState& device, db::Database& database, db::RowId device_id, const AxisWorkPlan& plan,
                       const TuneOptions& options, Progress& progress, const std::atomic<bool>& interrupt,
                       DeviceTuneResult& result, int index_offset, int total);

}  // namespace reduce_tune::tuner::detail
