// Axis measurements and classes as the tuner stores them; among them a class that keeps a
// second winner for its shapes on the 16-byte grid (db::AxisWinner::grid_config): `off`
// serves the class, `on` its shapes on the grid, both measured at R x outputs columns.
// Header-only: the runtime's and the GPU tests' binaries both link the database library.
#pragma once

#include <cstdint>
#include <string>

#include "reduce_tune/db/database.h"

namespace reduce_tune::testing {

// One ok measurement of `config` at R x outputs, as the tuner stores it.
inline db::AxisMeasurement axis_measurement(Op op, DType dtype, AxisLayout layout, std::uint64_t r,
                                            std::uint64_t outputs, const std::string& config, double ms) {
  db::AxisMeasurement m;
  m.op = op;
  m.dtype = m.out_dtype = dtype;
  m.layout = layout;
  m.reduced = r;
  m.outputs = outputs;
  m.inner = layout == AxisLayout::columns ? outputs : 1;
  m.config = config;
  m.status = db::MeasurementStatus::ok;
  m.median_ms = ms;
  m.repetitions = 10;
  m.tool_version = "reduce-tune test";
  m.created_at = db::now_timestamp();
  return m;
}

inline db::AxisBucketResult axis_class_with_grid_winner(const DeviceKey& device, Op op, DType dtype, int reduced_bucket,
                                                        int outputs_bucket, std::uint64_t r, std::uint64_t outputs,
                                                        const std::string& off, const std::string& on, double ms) {
  db::AxisBucketResult result;
  result.device = device;
  result.problem = {op, dtype, dtype, AxisLayout::columns, reduced_bucket, outputs_bucket};
  for (const std::string& config : {off, on})
    result.measurements.push_back(axis_measurement(op, dtype, AxisLayout::columns, r, outputs, config, ms));
  result.winner = 0;
  result.grid_winner = 1;
  result.tool_version = "reduce-tune test";
  result.created_at = db::now_timestamp();
  return result;
}

}  // namespace reduce_tune::testing
