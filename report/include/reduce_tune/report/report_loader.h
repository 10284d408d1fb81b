// Reads the report model out of the tuning database. Read-only: the database may be
// opened with Database::open_read_only.
#pragma once

#include "reduce_tune/db/database.h"
#include "reduce_tune/report/report.h"

namespace reduce_tune::report {

// The devices, problems and buckets the filter selects. A problem class appears when the
// device has measurements, winners or bench rows for it. Bench rows are the latest run's
// per (problem, n, implementation) (db::Database::latest_bench_results). Axis heat maps
// hold the device's axis winners and the axis classes finished without one.
ReportData load_report_data(const db::Database& database, const ReportFilter& filter = {});

}  // namespace reduce_tune::report
